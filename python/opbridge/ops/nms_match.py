"""NMSMatch: a PyTorch op (torch has none) and its ONNX export mapping.

``opbridge.ops.nms_match(boxes, scores, iou_threshold=0.1, score_threshold=0.05)`` is mmdeploy's
``NMSMatch``: boxes [B, N, 4] (x1, y1, x2, y2), scores [B, C, N] -> int64 rows
(batch, class, kept box, suppressed box). Per batch and class, every box takes part in greedy
suppression in descending score order (ties: lower index first; NaN first, as ``torch.sort``
puts it): a kept box suppresses every later box still standing whose IoU with it is >=
iou_threshold, where IoU = inter / (area_i + area_j - inter + 1e-10) (float32, the 1e-10 added in
float64 as mmdeploy's ``auto eps = 1e-10`` does). A kept box scoring > score_threshold gives one
row per box it suppressed; the suppressed box may score anything.

It exports to ``opbridge::NmsMatch`` with both exporters, the thresholds becoming [1] float
Constant inputs as mmdeploy writes them (``compat="mmdeploy"``: ``mmdeploy::NMSMatch``).
"""

from __future__ import annotations

import torch
from onnxscript import FLOAT, INT64
from onnxscript import opset18 as op
from torch import Tensor

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper


def nms_match(boxes: Tensor, scores: Tensor, iou_threshold: float = 0.1, score_threshold: float = 0.05) -> Tensor:
    """mmdeploy's NMSMatch: boxes [B, N, 4], scores [B, C, N] -> int64 [K, 4] rows (batch, class,
    kept box, suppressed box), in batch, class, kept box (descending score), suppressed box
    (descending score) order. Defaults are mmdeploy's ``multiclass_nms_match``'s."""
    return torch.ops.opbridge.nms_match(boxes, scores, float(iou_threshold), float(score_threshold))


def _check(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float) -> None:
    if boxes.dim() != 3 or boxes.shape[2] != 4 or scores.dim() != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise ValueError(f"nms_match: boxes must be [B, N, 4] and scores [B, C, N], got {list(boxes.shape)} and "
                         f"{list(scores.shape)}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"nms_match: iou_threshold must lie in [0, 1], got {iou_threshold}")
    if score_threshold != score_threshold:
        raise ValueError("nms_match: score_threshold must not be NaN")


def _match_one(boxes: Tensor, scores: Tensor, iou_threshold: Tensor, score_threshold: Tensor) -> list[tuple[int, int]]:
    """One batch and class, written from the spec: (kept, suppressed) box index pairs."""
    order = torch.sort(scores, descending=True, stable=True)[1]
    x1, y1, x2, y2 = boxes.unbind(1)
    area = (x2 - x1) * (y2 - y1)
    standing = torch.ones(len(order), dtype=torch.bool, device=scores.device)  # by position in `order`
    pairs = []
    for rank, i in enumerate(order.tolist()):
        if not standing[rank]:
            continue
        rest = order[rank + 1:]
        w = (torch.minimum(x2[i], x2[rest]) - torch.maximum(x1[i], x1[rest])).clamp(min=0)
        h = (torch.minimum(y2[i], y2[rest]) - torch.maximum(y1[i], y1[rest])).clamp(min=0)
        inter = w * h
        union = area[i] + area[rest] - inter  # float32
        iou = (inter.double() / (union.double() + 1e-10)).float()
        hit = standing[rank + 1:] & (iou >= iou_threshold)
        standing[rank + 1:] &= ~hit
        if bool(scores[i] > score_threshold):
            pairs += [(i, j) for j in rest[hit].tolist()]
    return pairs


@torch.library.custom_op("opbridge::nms_match", mutates_args=())
def _nms_match_op(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float) -> Tensor:
    _check(boxes, scores, iou_threshold, score_threshold)
    # The ONNX op takes float32 thresholds: compare with those values.
    iou = torch.tensor(iou_threshold, dtype=torch.float32, device=boxes.device)
    score = torch.tensor(score_threshold, dtype=torch.float32, device=boxes.device)
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            rows += [(b, c, i, j) for i, j in _match_one(boxes[b].float(), scores[b, c].float(), iou, score)]
    return torch.tensor(rows, dtype=torch.int64, device=boxes.device).reshape(-1, 4)


@_nms_match_op.register_fake
def _(boxes, scores, iou_threshold, score_threshold):
    rows = torch.library.get_ctx().new_dynamic_size()
    return boxes.new_empty((rows, 4), dtype=torch.int64)


# --- export mappings ----------------------------------------------------------------------------


@onnxscript.script(WRAPPERS)
def _nms_match_onnx(boxes: FLOAT, scores: FLOAT, iou_threshold: FLOAT, score_threshold: FLOAT) -> INT64:
    return OPBRIDGE.NmsMatch(boxes, scores, iou_threshold, score_threshold)


def _nms_match_dispatch(boxes, scores, iou_threshold, score_threshold):
    """Dynamo translation of opbridge::nms_match: the thresholds become [1] float Constants, the
    inputs mmdeploy's exporter writes (parameter names are the op schema's)."""
    iou = op.Constant(value_floats=[float(iou_threshold)])
    score = op.Constant(value_floats=[float(score_threshold)])
    return _nms_match_onnx(boxes, scores, iou, score)


def _nms_match_symbolic(g, boxes, scores, iou_threshold, score_threshold):
    args = symbolic_helper()._parse_arg
    thresholds = [g.op("Constant", value_t=torch.tensor([args(t, "f")], dtype=torch.float32))
                  for t in (iou_threshold, score_threshold)]
    matches = g.op("opbridge::NmsMatch", boxes, scores, *thresholds)
    matches.setType(boxes.type().with_dtype(torch.int64).with_sizes([None, 4]))
    return matches


EXPORT = ExportMapping(
    kernel="nms_match",
    dynamo={torch.ops.opbridge.nms_match.default: _nms_match_dispatch},
    legacy={"opbridge::nms_match": _nms_match_symbolic},
)
