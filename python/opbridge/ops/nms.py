"""Axis-aligned NMS: PyTorch ops where torch has none, and ONNX export mappings.

* ``torchvision.ops.nms`` is the op ``torchvision::nms`` already; it exports to ``opbridge::Nms``.
* ``torchvision.ops.batched_nms`` is a Python function whose first line branches on the number of
  boxes, which torch.export cannot do when that number is data-dependent (it always is after a
  score threshold). Inside ``opbridge.export`` it is replaced by ``opbridge.ops.batched_nms``, a
  ``torch.library`` op with a fake implementation, which exports to ``opbridge::BatchedNms``.
* ``opbridge.ops.multiclass_nms`` is ONNX NonMaxSuppression's multi-class layout as a PyTorch op;
  it exports to ``opbridge::MulticlassNms``.

With ``standard_ops=("nms",)`` (dynamo exporter) the first two become ONNX ``NonMaxSuppression``
instead, as torchvision's own ONNX export writes them.
"""

from __future__ import annotations

import torch
import torchvision
from onnxscript import FLOAT, INT64
from onnxscript import opset18 as op
from torch import Tensor

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, FunctionPatch, float32_of_half, symbolic_helper


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """torchvision.ops.batched_nms as a PyTorch op: NMS within each category of ``idxs``.

    Returns the int64 indices of the kept boxes in descending score order (ties: lower index
    first). The same set as torchvision's function; see docs/ops/nms.md for the tie order.
    """
    return torch.ops.opbridge.batched_nms(boxes, scores, idxs.to(torch.int64), float(iou_threshold))


def multiclass_nms(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float = 0.0,
                   max_output_boxes_per_class: int = -1) -> Tensor:
    """NMS per batch and class in ONNX NonMaxSuppression's layout.

    Args:
        boxes: [B, N, 4] (x1, y1, x2, y2).
        scores: [B, C, N].
        iou_threshold: a box is suppressed when its IoU with a kept box of its class is > this.
        score_threshold: only boxes scoring > this take part.
        max_output_boxes_per_class: at most this many kept per batch and class (-1: no limit).

    Returns:
        [K, 3] int64 rows (batch, class, box) in batch, class, descending score order.
    """
    return torch.ops.opbridge.multiclass_nms(boxes, scores, float(iou_threshold), float(score_threshold),
                                             int(max_output_boxes_per_class))


def _check_batched(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> None:
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"batched_nms: boxes must have shape [N, 4], got {list(boxes.shape)}")
    if scores.shape != boxes.shape[:1] or idxs.shape != boxes.shape[:1]:
        raise ValueError(f"batched_nms: scores and idxs must have shape [{boxes.shape[0]}], "
                         f"got {list(scores.shape)} and {list(idxs.shape)}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"batched_nms: iou_threshold must lie in [0, 1], got {iou_threshold}")


@torch.library.custom_op("opbridge::batched_nms", mutates_args=())
def _batched_nms_op(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    _check_batched(boxes, scores, idxs, iou_threshold)
    # Half boxes and scores: torchvision's nms in float32 on their values (what opbridge::BatchedNms
    # computes, and what autocast runs; torchvision's CPU kernel refuses half tensors).
    (boxes, scores), _ = float32_of_half(boxes, scores)
    return batched_nms_eager(boxes, scores, idxs, iou_threshold)


@_batched_nms_op.register_fake
def _(boxes, scores, idxs, iou_threshold):
    kept = torch.library.get_ctx().new_dynamic_size()
    torch._check(kept <= boxes.shape[0])
    return boxes.new_empty((kept,), dtype=torch.int64)


def batched_nms_eager(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """NMS per category with torchvision's nms, then every kept box in descending score order
    with ties by index (a stable sort)."""
    kept = torch.zeros(boxes.shape[0], dtype=torch.bool, device=boxes.device)
    for category in torch.unique(idxs):
        members = torch.where(idxs == category)[0]
        kept[members[torchvision.ops.nms(boxes[members], scores[members], iou_threshold)]] = True
    kept_indices = torch.where(kept)[0]
    return kept_indices[torch.sort(scores[kept_indices], descending=True, stable=True)[1]]


@torch.library.custom_op("opbridge::multiclass_nms", mutates_args=())
def _multiclass_nms_op(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float,
                       max_output_boxes_per_class: int) -> Tensor:
    if boxes.dim() != 3 or boxes.shape[2] != 4 or scores.dim() != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise ValueError(f"multiclass_nms: boxes must be [B, N, 4] and scores [B, C, N], got "
                         f"{list(boxes.shape)} and {list(scores.shape)}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"multiclass_nms: iou_threshold must lie in [0, 1], got {iou_threshold}")
    if score_threshold != score_threshold:
        raise ValueError("multiclass_nms: score_threshold must not be NaN")
    if max_output_boxes_per_class < -1:
        raise ValueError(f"multiclass_nms: max_output_boxes_per_class must be -1 or >= 0, got {max_output_boxes_per_class}")
    (boxes, scores), _ = float32_of_half(boxes, scores)  # as in batched_nms
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            candidates = torch.where(scores[b, c] > score_threshold)[0]
            keep = candidates[torchvision.ops.nms(boxes[b, candidates], scores[b, c, candidates], iou_threshold)]
            if max_output_boxes_per_class >= 0:
                keep = keep[:max_output_boxes_per_class]
            rows.append(torch.stack([torch.full_like(keep, b), torch.full_like(keep, c), keep], dim=1))
    return torch.cat(rows) if rows else torch.zeros((0, 3), dtype=torch.int64, device=boxes.device)


@_multiclass_nms_op.register_fake
def _(boxes, scores, iou_threshold, score_threshold, max_output_boxes_per_class):
    kept = torch.library.get_ctx().new_dynamic_size()
    return boxes.new_empty((kept, 3), dtype=torch.int64)


# --- export mappings ----------------------------------------------------------------------------


@onnxscript.script(WRAPPERS)
def _nms_onnx(dets: FLOAT, scores: FLOAT, iou_threshold: float) -> INT64:
    return OPBRIDGE.Nms(dets, scores, iou_threshold=iou_threshold)


@onnxscript.script(WRAPPERS)
def _batched_nms_onnx(boxes: FLOAT, scores: FLOAT, idxs: INT64, iou_threshold: float) -> INT64:
    return OPBRIDGE.BatchedNms(boxes, scores, idxs, iou_threshold=iou_threshold)


@onnxscript.script(WRAPPERS)
def _multiclass_nms_onnx(boxes: FLOAT, scores: FLOAT, iou_threshold: float, score_threshold: float,
                         max_output_boxes_per_class: int) -> INT64:
    return OPBRIDGE.MulticlassNms(boxes, scores, iou_threshold=iou_threshold, score_threshold=score_threshold,
                                  max_output_boxes_per_class=max_output_boxes_per_class)


@onnxscript.script(WRAPPERS)
def _batched_nms_standard_onnx(boxes: FLOAT, scores: FLOAT, idxs: INT64, iou_threshold: float) -> INT64:
    # torchvision's coordinate trick, as torchvision's own ONNX export writes it: categories are
    # moved apart by offsets larger than every coordinate, then one NonMaxSuppression runs. The
    # maximum includes 0 so that an empty input needs no branch.
    zero = op.Constant(value_floats=[0.0])
    max_coordinate = op.ReduceMax(op.Concat(op.Reshape(boxes, op.Constant(value_ints=[-1])), zero, axis=0),
                                  keepdims=0)
    offsets = op.Mul(op.Cast(idxs, to=1), op.Add(max_coordinate, op.Constant(value_float=1.0)))
    shifted = op.Add(boxes, op.Unsqueeze(offsets, op.Constant(value_ints=[1])))
    selected = op.NonMaxSuppression(
        op.Unsqueeze(shifted, op.Constant(value_ints=[0])),
        op.Unsqueeze(scores, op.Constant(value_ints=[0, 1])),
        op.Constant(value_ints=[9223372036854775807]),
        op.Constant(value_float=iou_threshold),
    )
    return op.Reshape(op.Slice(selected, op.Constant(value_ints=[2]), op.Constant(value_ints=[3]),
                               op.Constant(value_ints=[1])), op.Constant(value_ints=[-1]))


@onnxscript.script(WRAPPERS)
def _multiclass_nms_standard_onnx(boxes: FLOAT, scores: FLOAT, iou_threshold: float, score_threshold: float,
                                  max_output_boxes_per_class: int) -> INT64:
    return op.NonMaxSuppression(boxes, scores, op.Constant(value_int=max_output_boxes_per_class),
                                op.Constant(value_float=iou_threshold), op.Constant(value_float=score_threshold))


def _multiclass_nms_standard(boxes, scores, iou_threshold, score_threshold, max_output_boxes_per_class):
    """ONNX NonMaxSuppression has the same layout; its "no limit" is a large count, not -1."""
    limit = 9223372036854775807 if max_output_boxes_per_class < 0 else int(max_output_boxes_per_class)
    return _multiclass_nms_standard_onnx(boxes, scores, iou_threshold, score_threshold, limit)


def _nms_symbolic(g, dets, scores, iou_threshold):
    keep = g.op("opbridge::Nms", dets, scores, iou_threshold_f=symbolic_helper()._parse_arg(iou_threshold, "f"))
    keep.setType(dets.type().with_dtype(torch.int64).with_sizes([None]))
    return keep


def _batched_nms_symbolic(g, boxes, scores, idxs, iou_threshold):
    keep = g.op("opbridge::BatchedNms", boxes, scores, idxs,
                iou_threshold_f=symbolic_helper()._parse_arg(iou_threshold, "f"))
    keep.setType(boxes.type().with_dtype(torch.int64).with_sizes([None]))
    return keep


def _multiclass_nms_symbolic(g, boxes, scores, iou_threshold, score_threshold, max_output_boxes_per_class):
    args = symbolic_helper()._parse_arg
    selected = g.op("opbridge::MulticlassNms", boxes, scores, iou_threshold_f=args(iou_threshold, "f"),
                    score_threshold_f=args(score_threshold, "f"),
                    max_output_boxes_per_class_i=args(max_output_boxes_per_class, "i"))
    selected.setType(boxes.type().with_dtype(torch.int64).with_sizes([None, 3]))
    return selected


def _batched_nms_replacement(boxes, scores, idxs, iou_threshold):
    """What torchvision.ops.batched_nms becomes inside opbridge.export."""
    return batched_nms(boxes, scores, idxs, iou_threshold)


EXPORT = ExportMapping(
    kernel="nms",
    dynamo={
        torch.ops.torchvision.nms.default: _nms_onnx,
        torch.ops.opbridge.batched_nms.default: _batched_nms_onnx,
        torch.ops.opbridge.multiclass_nms.default: _multiclass_nms_onnx,
    },
    legacy={
        "torchvision::nms": _nms_symbolic,
        "opbridge::batched_nms": _batched_nms_symbolic,
        "opbridge::multiclass_nms": _multiclass_nms_symbolic,
    },
    # torchvision::nms keeps torch's own translation to NonMaxSuppression.
    standard={
        torch.ops.opbridge.batched_nms.default: _batched_nms_standard_onnx,
        torch.ops.opbridge.multiclass_nms.default: _multiclass_nms_standard,
    },
    patches=(FunctionPatch(torchvision.ops.boxes.batched_nms, _batched_nms_replacement),),
    standard_exporters=("dynamo",),
)
