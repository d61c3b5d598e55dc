"""Rotated NMS: PyTorch ops (torch has none) and their ONNX export mappings.

* ``opbridge.ops.nms_rotated(boxes, scores, iou_threshold, clockwise=True)`` and
  ``opbridge.ops.batched_nms_rotated(boxes, scores, idxs, iou_threshold, clockwise=True)``: mmcv's
  ``nms_rotated`` (a box is suppressed when its IoU with a kept box is >= the threshold), per
  category for the batched form; they export to ``opbridge::NmsRotated``.
* ``opbridge.ops.multiclass_nms_rotated(boxes, scores, iou_threshold, score_threshold)``: the
  multi-class layout of mmdeploy's ``NMSRotated`` (IoU > threshold); it exports to
  ``opbridge::MulticlassNmsRotated`` (``compat="mmdeploy"``: ``mmdeploy::NMSRotated``).

Boxes are (cx, cy, w, h, theta in radians), with mmcv's convention: the width axis points along
(cos theta, sin theta). The eager implementations compute the rotated IoU exactly (in float64, by
clipping one rectangle with the other); the C++ kernel computes mmcv's float32 algorithm, which
agrees to ~1e-6 except where mmcv's own arithmetic is wrong (see docs/ops/nms_rotated.md).
"""

from __future__ import annotations

import torch
from torch import Tensor

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode


def nms_rotated(boxes: Tensor, scores: Tensor, iou_threshold: float, clockwise: bool = True) -> Tensor:
    """mmcv.ops.nms_rotated's keep indices: boxes [N, 5], scores [N] -> int64 [K], in descending
    score order (ties: lower index first). clockwise=False negates theta first, as mmcv does."""
    return torch.ops.opbridge.nms_rotated(boxes, scores, None, float(iou_threshold), bool(clockwise))


def batched_nms_rotated(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float,
                        clockwise: bool = True) -> Tensor:
    """nms_rotated within each category of idxs (boxes of different categories never suppress
    each other); all kept boxes in descending score order."""
    return torch.ops.opbridge.nms_rotated(boxes, scores, idxs.to(torch.int64), float(iou_threshold), bool(clockwise))


def multiclass_nms_rotated(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float = 0.0) -> Tensor:
    """mmdeploy's NMSRotated: boxes [B, N, 5], scores [B, C, N] -> int64 rows (batch, class, box) of
    the boxes scoring > score_threshold that survive NMS (IoU > iou_threshold) within their batch
    and class, in batch, class, descending score order."""
    return torch.ops.opbridge.multiclass_nms_rotated(boxes, scores, float(iou_threshold), float(score_threshold))


# --- eager implementations ------------------------------------------------------------------------


def _corners(boxes: Tensor) -> Tensor:
    """[..., 5] rotated boxes -> [..., 4, 2] corners (float64), mmcv's axis convention."""
    cx, cy, w, h, theta = boxes.double().unbind(-1)
    c, s = torch.cos(theta), torch.sin(theta)
    dx = torch.stack([-w, w, w, -w], -1) / 2
    dy = torch.stack([-h, -h, h, h], -1) / 2
    x = cx[..., None] + dx * c[..., None] - dy * s[..., None]
    y = cy[..., None] + dx * s[..., None] + dy * c[..., None]
    return torch.stack([x, y], -1)


def _inside(points: Tensor, rect: Tensor) -> Tensor:
    """Whether points [P, M, 2] lie in the convex quadrilaterals rect [P, 4, 2] (either winding)."""
    edges = rect.roll(-1, dims=1) - rect
    rel = points[:, :, None, :] - rect[:, None, :, :]
    cross = edges[:, None, :, 0] * rel[..., 1] - edges[:, None, :, 1] * rel[..., 0]
    return (cross >= -1e-9).all(-1) | (cross <= 1e-9).all(-1)


def rotated_iou(a: Tensor, b: Tensor) -> Tensor:
    """IoU of rotated boxes a[i] and b[i] ([P, 5] each), exactly up to float64 rounding: the
    intersection polygon's vertices are the corners of each box inside the other and the crossings
    of their edges; its area comes from those points in angular order around their centroid."""
    pa, pb = _corners(a), _corners(b)
    ea, eb = pa.roll(-1, dims=1) - pa, pb.roll(-1, dims=1) - pb
    # Edge i of a against edge j of b: p + t r = q + u s.
    r, s = ea[:, :, None, :], eb[:, None, :, :]
    qp = pb[:, None, :, :] - pa[:, :, None, :]
    denom = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    safe = torch.where(denom.abs() > 1e-12, denom, torch.ones_like(denom))
    t = (qp[..., 0] * s[..., 1] - qp[..., 1] * s[..., 0]) / safe
    u = (qp[..., 0] * r[..., 1] - qp[..., 1] * r[..., 0]) / safe
    crossing = (denom.abs() > 1e-12) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)
    crossings = (pa[:, :, None, :] + t[..., None] * r).reshape(-1, 16, 2)
    points = torch.cat([pa, pb, crossings], 1)
    valid = torch.cat([_inside(pa, pb), _inside(pb, pa), crossing.reshape(-1, 16)], 1)
    count = valid.sum(1)
    centroid = (points * valid[..., None]).sum(1) / count.clamp(min=1)[:, None]
    angle = torch.atan2(points[..., 1] - centroid[:, None, 1], points[..., 0] - centroid[:, None, 0])
    angle = torch.where(valid, angle, torch.full_like(angle, 10.0))  # invalid points last
    order = angle.argsort(1)
    ordered = points.gather(1, order[..., None].expand(-1, -1, 2))
    ordered_valid = valid.gather(1, order)
    # Shoelace over the valid points, closing the polygon from the last valid point to the first.
    nxt = torch.where(ordered_valid.roll(-1, 1), ordered.roll(-1, 1)[..., 0], ordered[:, :1, 0])
    nyt = torch.where(ordered_valid.roll(-1, 1), ordered.roll(-1, 1)[..., 1], ordered[:, :1, 1])
    terms = (ordered[..., 0] * nyt - ordered[..., 1] * nxt) * ordered_valid
    inter = torch.where(count >= 3, terms.sum(1).abs() / 2, torch.zeros_like(count, dtype=torch.float64))
    area_a = (a[:, 2] * a[:, 3]).double().abs()
    area_b = (b[:, 2] * b[:, 3]).double().abs()
    return inter / (area_a + area_b - inter)


def _active(boxes: Tensor, min_area: float) -> Tensor:
    """Boxes that take part (the kernels' rule): finite values, area w * h above the limit."""
    area = boxes[:, 2].double() * boxes[:, 3].double()
    return torch.isfinite(boxes).all(1) & ((area >= min_area) if min_area > 0 else (area > 0))


def greedy_rotated(boxes: Tensor, scores: Tensor, iou_threshold: float, inclusive: bool, min_area: float) -> Tensor:
    """Greedy NMS over rotated boxes, one category: kept indices in descending score order."""
    order = torch.sort(scores, descending=True, stable=True)[1]
    active = _active(boxes, min_area)
    suppressed = torch.zeros(len(order), dtype=torch.bool, device=boxes.device)
    keep = []
    for rank, i in enumerate(order.tolist()):
        if suppressed[rank]:
            continue
        keep.append(i)
        rest = order[rank + 1:]
        if len(rest) == 0:
            continue
        iou = torch.zeros(len(rest), dtype=torch.float64, device=boxes.device)
        both = active[rest] & active[i]
        if both.any():
            iou[both] = rotated_iou(boxes[i].expand(int(both.sum()), 5), boxes[rest[both]])
        hit = iou >= iou_threshold if inclusive else iou > iou_threshold
        suppressed[rank + 1:] |= hit
    return torch.tensor(keep, dtype=torch.int64, device=boxes.device)


@torch.library.custom_op("opbridge::nms_rotated", mutates_args=())
def _nms_rotated_op(boxes: Tensor, scores: Tensor, idxs: Tensor | None, iou_threshold: float, clockwise: bool) -> Tensor:
    if boxes.dim() != 2 or boxes.shape[1] != 5 or scores.shape != boxes.shape[:1]:
        raise ValueError(f"nms_rotated: boxes must be [N, 5] and scores [N], got {list(boxes.shape)} and "
                         f"{list(scores.shape)}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"nms_rotated: iou_threshold must lie in [0, 1], got {iou_threshold}")
    if idxs is not None and idxs.shape != scores.shape:
        raise ValueError(f"batched_nms_rotated: idxs must have shape [{len(scores)}], got {list(idxs.shape)}")
    if not clockwise:
        boxes = torch.cat([boxes[:, :4], -boxes[:, 4:]], 1)
    if idxs is None:
        return greedy_rotated(boxes, scores, iou_threshold, True, 1e-14)
    kept = torch.zeros(len(scores), dtype=torch.bool, device=scores.device)
    for category in torch.unique(idxs):
        members = torch.where(idxs == category)[0]
        kept[members[greedy_rotated(boxes[members], scores[members], iou_threshold, True, 1e-14)]] = True
    kept_indices = torch.where(kept)[0]
    return kept_indices[torch.sort(scores[kept_indices], descending=True, stable=True)[1]]


@_nms_rotated_op.register_fake
def _(boxes, scores, idxs, iou_threshold, clockwise):
    kept = torch.library.get_ctx().new_dynamic_size()
    torch._check(kept <= boxes.shape[0])
    return boxes.new_empty((kept,), dtype=torch.int64)


@torch.library.custom_op("opbridge::multiclass_nms_rotated", mutates_args=())
def _multiclass_nms_rotated_op(boxes: Tensor, scores: Tensor, iou_threshold: float, score_threshold: float) -> Tensor:
    if boxes.dim() != 3 or boxes.shape[2] != 5 or scores.dim() != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise ValueError(f"multiclass_nms_rotated: boxes must be [B, N, 5] and scores [B, C, N], got "
                         f"{list(boxes.shape)} and {list(scores.shape)}")
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"multiclass_nms_rotated: iou_threshold must lie in [0, 1], got {iou_threshold}")
    if score_threshold != score_threshold:
        raise ValueError("multiclass_nms_rotated: score_threshold must not be NaN")
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            candidates = torch.where(scores[b, c] > score_threshold)[0]
            keep = candidates[greedy_rotated(boxes[b, candidates], scores[b, c, candidates], iou_threshold, False, 0.0)]
            rows.append(torch.stack([torch.full_like(keep, b), torch.full_like(keep, c), keep], 1))
    return torch.cat(rows) if rows else torch.zeros((0, 3), dtype=torch.int64, device=boxes.device)


@_multiclass_nms_rotated_op.register_fake
def _(boxes, scores, iou_threshold, score_threshold):
    kept = torch.library.get_ctx().new_dynamic_size()
    return boxes.new_empty((kept, 3), dtype=torch.int64)


# --- export mappings ----------------------------------------------------------------------------

# nms_rotated without idxs leaves the node's optional input out; with idxs it is the batched form.
NODE = OneNode("opbridge::NmsRotated", torch.ops.opbridge.nms_rotated.default, sizes=lambda shapes: [[None]])
MULTICLASS_NODE = OneNode("opbridge::MulticlassNmsRotated", torch.ops.opbridge.multiclass_nms_rotated.default,
                          sizes=lambda shapes: [[None, 3]])

EXPORT = ExportMapping(
    kernel="nms_rotated",
    dynamo={**NODE.dynamo, **MULTICLASS_NODE.dynamo},
    legacy={**NODE.legacy, **MULTICLASS_NODE.legacy},
)
