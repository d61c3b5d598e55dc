"""TensorRT's batched NMS: PyTorch ops (torch has none) and their ONNX export mappings.

``opbridge.ops.trt_batched_nms(boxes, scores, keep_topk, iou_threshold, ...)`` and
``opbridge.ops.trt_batched_rotated_nms(...)`` compute what mmdeploy's ``TRTBatchedNMS`` and
``TRTBatchedRotatedNMS`` plugins compute (NVIDIA's batchedNMSPlugin pipeline), with fixed-size
outputs: per image and class (the background class skipped), the boxes scoring > score_threshold,
in descending score order (ties: lower box index first), the first ``topk`` through greedy NMS
(suppression when IoU > iou_threshold), then all classes' kept boxes in descending score order
(ties: lower class first, then the class's order), the first ``keep_topk`` as
dets [B, keep_topk, 5 or 6] (box, score) and labels [B, keep_topk] (int32), empty rows zeros with
label -1; optionally index [B, keep_topk] (int32), the box's index.

They export to ``opbridge::TrtBatchedNms`` / ``opbridge::TrtBatchedRotatedNms`` with both
exporters (``compat="mmdeploy"``: ``mmdeploy::TRTBatchedNMS`` / ``mmdeploy::TRTBatchedRotatedNMS``),
with mmdeploy's exporter's choices as the Python defaults: no background class, no clipping.

The eager implementations are written from the plugin's code: the axis-aligned IoU is the
plugin's ``jaccardOverlap`` (touching or disjoint boxes 0, inverted boxes area 0); the rotated
IoU is computed exactly in float64 (opbridge.ops.nms_rotated.rotated_iou), where the C++ kernel
computes mmcv's float32 algorithm (see docs/ops/trt_batched_nms.md).
"""

from __future__ import annotations

import torch
from torch import Tensor

from opbridge.ops._onnx import ExportMapping, symbolic_helper
from opbridge.ops._one_node import OneNode
from opbridge.ops.nms_rotated import greedy_rotated


def trt_batched_nms(boxes: Tensor, scores: Tensor, keep_topk: int, iou_threshold: float, score_threshold: float = 0.0,
                    topk: int = -1, background_label_id: int = -1, clip_boxes: bool = False,
                    return_index: bool = False) -> tuple[Tensor, ...]:
    """mmdeploy's TRTBatchedNMS: boxes [B, S, 1 or C, 4] (x1, y1, x2, y2), scores [B, S, C] ->
    dets [B, keep_topk, 5], labels [B, keep_topk] (int32) and, with return_index, index
    [B, keep_topk] (int32). topk <= 0: every candidate of a class takes part."""
    num_classes = int(scores.shape[-1]) if scores.dim() == 3 else 0
    args = (boxes, scores, num_classes, int(keep_topk), float(iou_threshold), float(score_threshold), int(topk),
            int(background_label_id), bool(clip_boxes))
    if return_index:
        return torch.ops.opbridge.trt_batched_nms_with_index(*args)
    return torch.ops.opbridge.trt_batched_nms(*args, False)


def trt_batched_rotated_nms(boxes: Tensor, scores: Tensor, keep_topk: int, iou_threshold: float,
                            score_threshold: float = 0.0, topk: int = -1, background_label_id: int = -1,
                            clip_boxes: bool = False) -> tuple[Tensor, Tensor]:
    """mmdeploy's TRTBatchedRotatedNMS: boxes [B, S, 1 or C, 5] (cx, cy, w, h, theta), scores
    [B, S, C] -> dets [B, keep_topk, 6], labels [B, keep_topk] (int32)."""
    num_classes = int(scores.shape[-1]) if scores.dim() == 3 else 0
    return torch.ops.opbridge.trt_batched_nms(boxes, scores, num_classes, int(keep_topk), float(iou_threshold),
                                              float(score_threshold), int(topk), int(background_label_id),
                                              bool(clip_boxes), True)


# --- eager implementation -------------------------------------------------------------------------


def _check(boxes: Tensor, scores: Tensor, box_size: int, num_classes: int, keep_topk: int, iou_threshold: float,
           score_threshold: float, background_label_id: int) -> None:
    if boxes.dim() != 4 or boxes.shape[3] != box_size or scores.dim() != 3 or scores.shape[:2] != boxes.shape[:2] \
            or boxes.shape[2] not in (1, scores.shape[2]):
        raise ValueError(f"trt_batched_nms: boxes must be [B, S, 1 or C, {box_size}] and scores [B, S, C], got "
                         f"{list(boxes.shape)} and {list(scores.shape)}")
    if num_classes < 1 or num_classes != scores.shape[2]:
        raise ValueError(f"trt_batched_nms: num_classes must be the scores' C >= 1, got {num_classes}")
    if keep_topk < 0:
        raise ValueError(f"trt_batched_nms: keep_topk must be >= 0, got {keep_topk}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"trt_batched_nms: iou_threshold must lie in [0, 1], got {iou_threshold}")
    if score_threshold != score_threshold:
        raise ValueError("trt_batched_nms: score_threshold must not be NaN")
    if background_label_id < -1:
        raise ValueError(f"trt_batched_nms: background_label_id must be -1 or a class, got {background_label_id}")


def _jaccard_overlap(ref: Tensor, others: Tensor) -> Tensor:
    """The plugin's jaccardOverlap (offset 0) of box ref [4] with others [M, 4], in float32."""
    x1, y1, x2, y2 = others.unbind(1)
    disjoint = (x1 > ref[2]) | (x2 < ref[0]) | (y1 > ref[3]) | (y2 < ref[1])
    width = torch.minimum(ref[2], x2) - torch.maximum(ref[0], x1)
    height = torch.minimum(ref[3], y2) - torch.maximum(ref[1], y1)

    def size(bx1, by1, bx2, by2):
        inverted = (bx2 < bx1) | (by2 < by1)
        return torch.where(inverted, torch.zeros_like(bx1), (bx2 - bx1) * (by2 - by1))

    inter = width * height
    iou = inter / (size(*ref.unbind(0)) + size(x1, y1, x2, y2) - inter)
    return torch.where(~disjoint & (width > 0) & (height > 0), iou, torch.zeros_like(iou))


def _greedy_axis_aligned(boxes: Tensor, iou_threshold: float) -> list[int]:
    """Greedy NMS of boxes already in score order: the positions kept."""
    suppressed = torch.zeros(len(boxes), dtype=torch.bool, device=boxes.device)
    kept = []
    for i in range(len(boxes)):
        if suppressed[i]:
            continue
        kept.append(i)
        if i + 1 < len(boxes):
            suppressed[i + 1:] |= _jaccard_overlap(boxes[i], boxes[i + 1:]) > iou_threshold
    return kept


def trt_batched_nms_eager(boxes: Tensor, scores: Tensor, num_classes: int, keep_topk: int, iou_threshold: float,
                          score_threshold: float, topk: int, background_label_id: int, clip_boxes: bool,
                          rotated: bool) -> tuple[Tensor, Tensor, Tensor]:
    """The plugin's pipeline, written from its code: dets, labels and index (all three)."""
    box_size = 5 if rotated else 4
    _check(boxes, scores, box_size, num_classes, keep_topk, iou_threshold, score_threshold, background_label_id)
    batch, count, loc_classes = boxes.shape[:3]
    boxes, scores = boxes.float(), scores.float()
    take = topk if 0 < topk <= count else count
    dets = torch.zeros((batch, keep_topk, box_size + 1), dtype=torch.float32, device=boxes.device)
    labels = torch.full((batch, keep_topk), -1, dtype=torch.int32, device=boxes.device)
    index = torch.full((batch, keep_topk), -1, dtype=torch.int32, device=boxes.device)
    for b in range(batch):
        found = []  # (score, class, rank, box) of every kept box
        for c in range(num_classes):
            if c == background_label_id:
                continue
            class_boxes = boxes[b, :, 0 if loc_classes == 1 else c]
            candidates = torch.where(scores[b, :, c] > score_threshold)[0]
            order = candidates[torch.sort(scores[b, candidates, c], descending=True, stable=True)[1]][:take]
            if rotated:
                kept = greedy_rotated(class_boxes[order], scores[b, order, c], iou_threshold, False, 1e-14).tolist()
            else:
                kept = _greedy_axis_aligned(class_boxes[order], iou_threshold)
            found += [(float(scores[b, order[k], c]), c, rank, int(order[k])) for rank, k in enumerate(kept)]
        found.sort(key=lambda d: (-d[0], d[1], d[2]))
        for r, (score, c, _, s) in enumerate(found[:keep_topk]):
            box = boxes[b, s, 0 if loc_classes == 1 else c]
            dets[b, r, :box_size] = box.nan_to_num(nan=1.0).clamp(0.0, 1.0) if clip_boxes else box
            dets[b, r, box_size] = score
            labels[b, r] = c
            index[b, r] = s if loc_classes == 1 else c * count + s
    return dets, labels, index


def _fake(boxes, keep_topk, box_size):
    batch = boxes.shape[0]
    return (boxes.new_empty((batch, keep_topk, box_size + 1), dtype=torch.float32),
            boxes.new_empty((batch, keep_topk), dtype=torch.int32))


@torch.library.custom_op("opbridge::trt_batched_nms", mutates_args=())
def _trt_batched_nms_op(boxes: Tensor, scores: Tensor, num_classes: int, keep_topk: int, iou_threshold: float,
                        score_threshold: float, topk: int, background_label_id: int, clip_boxes: bool,
                        rotated: bool) -> tuple[Tensor, Tensor]:
    dets, labels, _ = trt_batched_nms_eager(boxes, scores, num_classes, keep_topk, iou_threshold, score_threshold, topk,
                                            background_label_id, clip_boxes, rotated)
    return dets, labels


@_trt_batched_nms_op.register_fake
def _(boxes, scores, num_classes, keep_topk, iou_threshold, score_threshold, topk, background_label_id, clip_boxes,
      rotated):
    return _fake(boxes, keep_topk, 5 if rotated else 4)


# The index output makes a third output, so an op of its own (axis-aligned boxes only, as in mmdeploy).
@torch.library.custom_op("opbridge::trt_batched_nms_with_index", mutates_args=())
def _trt_batched_nms_with_index_op(boxes: Tensor, scores: Tensor, num_classes: int, keep_topk: int,
                                   iou_threshold: float, score_threshold: float, topk: int, background_label_id: int,
                                   clip_boxes: bool) -> tuple[Tensor, Tensor, Tensor]:
    return trt_batched_nms_eager(boxes, scores, num_classes, keep_topk, iou_threshold, score_threshold, topk,
                                 background_label_id, clip_boxes, rotated=False)


@_trt_batched_nms_with_index_op.register_fake
def _(boxes, scores, num_classes, keep_topk, iou_threshold, score_threshold, topk, background_label_id, clip_boxes):
    dets, labels = _fake(boxes, keep_topk, 4)
    return dets, labels, torch.empty_like(labels)


# --- export mappings ----------------------------------------------------------------------------
# The nodes carry every attribute as mmdeploy's exporter writes them (is_normalized 0).


def _sizes(box_size: int):
    """dets [B, keep_topk, box_size + 1], labels (and index) [B, keep_topk]."""

    def sizes(shapes):
        batch, keep = shapes.dim("boxes", 0), shapes.attributes["keep_topk"]
        return [[batch, keep, box_size + 1], [batch, keep], [batch, keep]]

    return sizes


PLAIN_NODE = OneNode("opbridge::TrtBatchedNms", torch.ops.opbridge.trt_batched_nms.default,
                     attributes={"is_normalized": 0, "return_index": 0}, outputs=2, sizes=_sizes(4))
ROTATED_NODE = OneNode("opbridge::TrtBatchedRotatedNms", torch.ops.opbridge.trt_batched_nms.default,
                       attributes={"is_normalized": 0}, sizes=_sizes(5))
WITH_INDEX_NODE = OneNode("opbridge::TrtBatchedNms", torch.ops.opbridge.trt_batched_nms_with_index.default,
                          attributes={"is_normalized": 0, "return_index": 1}, sizes=_sizes(4))


# opbridge::trt_batched_nms's last argument, rotated, picks the node.
def _trt_batched_nms_dispatch(*args):
    """Dynamo translation of opbridge::trt_batched_nms."""
    return (ROTATED_NODE if args[-1] else PLAIN_NODE).translation(*args)


def _trt_batched_nms_symbolic(g, *args):
    rotated = symbolic_helper()._parse_arg(args[-1], "b")
    return (ROTATED_NODE if rotated else PLAIN_NODE).symbolic(g, *args)


EXPORT = ExportMapping(
    kernel="trt_batched_nms",
    dynamo={torch.ops.opbridge.trt_batched_nms.default: _trt_batched_nms_dispatch, **WITH_INDEX_NODE.dynamo},
    legacy={"opbridge::trt_batched_nms": _trt_batched_nms_symbolic, **WITH_INDEX_NODE.legacy},
)
