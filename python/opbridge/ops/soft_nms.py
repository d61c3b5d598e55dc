"""Soft-NMS: the PyTorch op (torch has none), its fake for export, and its ONNX export mappings."""

from __future__ import annotations

import torch
from torch import Tensor

from opbridge import manifest
from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

METHODS = {"naive": 0, "linear": 1, "gaussian": 2}


def soft_nms(
    boxes: Tensor,
    scores: Tensor,
    iou_threshold: float = 0.3,
    sigma: float = 0.5,
    min_score: float = 1e-3,
    method: str = "linear",
    offset: int = 0,
) -> tuple[Tensor, Tensor]:
    """Soft non-maximum suppression, as mmcv.ops.soft_nms computes it.

    Args:
        boxes: [N, 4] (x1, y1, x2, y2), float32.
        scores: [N], float32.
        iou_threshold: IoU at or above which "naive" drops and "linear" decays a score.
        sigma: "gaussian" decays a score by exp(-IoU^2 / sigma).
        min_score: a box whose decayed score falls below this is dropped.
        method: "naive", "linear" or "gaussian".
        offset: 0, or 1 for the legacy convention that adds 1 to widths and heights.

    Returns:
        dets [K, 5]: kept boxes in selection order with their decayed scores;
        inds [K] (int64): their indices in `boxes`.
    """
    if method not in METHODS:
        raise ValueError(f"soft_nms: method must be one of {sorted(METHODS)}, got {method!r}")
    return torch.ops.opbridge.soft_nms(
        boxes, scores, float(iou_threshold), float(sigma), float(min_score), METHODS[method], int(offset)
    )


@torch.library.custom_op("opbridge::soft_nms", mutates_args=())
def _soft_nms_op(
    boxes: Tensor, scores: Tensor, iou_threshold: float, sigma: float, min_score: float, method: int, offset: int
) -> tuple[Tensor, Tensor]:
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"soft_nms: boxes must have shape [N, 4], got {list(boxes.shape)}")
    if scores.shape != boxes.shape[:1]:
        raise ValueError(f"soft_nms: scores must have shape [{boxes.shape[0]}], got {list(scores.shape)}")
    manifest.load()["soft_nms"].attribute("method").check(method, "soft_nms")
    return soft_nms_eager(boxes, scores, iou_threshold, sigma, min_score, method, offset)


@_soft_nms_op.register_fake
def _(boxes, scores, iou_threshold, sigma, min_score, method, offset):
    # The number of kept boxes depends on the data: an unbacked size, at most N.
    kept = torch.library.get_ctx().new_dynamic_size()
    torch._check(kept <= boxes.shape[0])
    return boxes.new_empty((kept, 5)), boxes.new_empty((kept,), dtype=torch.int64)


def soft_nms_eager(boxes, scores, iou_threshold, sigma, min_score, method, offset):
    """The eager implementation: mmcv's algorithm with tensor ops over the remaining boxes.

    Same order of picks, same float arithmetic per box as the C++ kernel (see
    src/kernels/cpu/soft_nms.cc): the decay of all later boxes is one vectorized step, then the
    drop-and-move pass runs in mmcv's order.
    """
    dtype = boxes.dtype
    x1, y1, x2, y2 = (boxes[:, k].clone() for k in range(4))
    sc = scores.clone()
    off = torch.tensor(float(offset), dtype=dtype, device=boxes.device)
    areas = (x2 - x1 + off) * (y2 - y1 + off)
    index = torch.arange(boxes.shape[0], dtype=torch.int64, device=boxes.device)
    arrays = [x1, y1, x2, y2, sc, areas, index]
    dets, inds = [], []
    n = boxes.shape[0]
    i = 0
    zero = torch.tensor(0.0, dtype=dtype, device=boxes.device)
    while i < n:
        # First position of the maximum (NaN at position i stays picked, as in mmcv).
        best = i
        rest = sc[i + 1 : n]
        if rest.numel() > 0 and not torch.isnan(sc[i]):
            candidate = int(torch.argmax(torch.nan_to_num(rest, nan=-float("inf")))) + i + 1
            if sc[candidate] > sc[i]:
                best = candidate
        if best != i:
            for a in arrays:
                a[[i, best]] = a[[best, i]]
        dets.append(torch.stack([x1[i], y1[i], x2[i], y2[i], sc[i]]))
        inds.append(index[i])
        if i + 1 < n:
            s = slice(i + 1, n)
            w = torch.maximum(zero, torch.minimum(x2[i], x2[s]) - torch.maximum(x1[i], x1[s]) + off)
            h = torch.maximum(zero, torch.minimum(y2[i], y2[s]) - torch.maximum(y1[i], y1[s]) + off)
            inter = w * h
            iou = inter / (areas[i] + areas[s] - inter)
            if method == 0:
                weight = torch.where(iou >= iou_threshold, 0.0, 1.0).to(dtype)
            elif method == 1:
                weight = torch.where(iou >= iou_threshold, 1.0 - iou, 1.0).to(dtype)
            else:
                weight = torch.exp(-(iou * iou) / sigma)
            sc[s] = sc[s] * weight
            # Drop boxes below min_score, moving the last box into the hole (mmcv's order).
            below = (sc[s] < min_score).nonzero().flatten().tolist()
            if below:
                k = i + 1 + below[0]
                while k < n:
                    if sc[k] < min_score:
                        for a in arrays:
                            a[k] = a[n - 1]
                        n -= 1
                    else:
                        k += 1
        i += 1
    if not dets:
        return boxes.new_zeros((0, 5)), torch.zeros((0,), dtype=torch.int64, device=boxes.device)
    return torch.stack(dets), torch.stack(inds)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::SoftNonMaxSuppression", torch.ops.opbridge.soft_nms.default,
               sizes=lambda shapes: [[None, 5], [None]])

EXPORT = ExportMapping(kernel="soft_nms", dynamo=NODE.dynamo, legacy=NODE.legacy)
