"""Rotated NMS workload (workloads.md: nms_rotated): boxes [1, 2000, 5], scores [1, 15, 2000],
iou 0.1, score 0.05, through opbridge::MulticlassNmsRotated (mmdeploy's NMSRotated layout).

Neither ORT nor PyTorch has a rotated NMS (mmdeploy's shipped op took 190 ms on this kind of
machine, peer_baseline.md). The PyTorch column is what a user writes without one: every class's
candidates sorted and padded into one batch, the dense matrix of their rotated IoUs (the vectorised
polygon clipping of opbridge.ops.nms_rotated.rotated_iou, float64), then the greedy pass as one
loop over the ranks of tensor operations on all classes at once (no transfer to the host inside
it). It keeps the same rows as opbridge's eager PyTorch op (exact float64 geometry), which runs
once, untimed, as the check. The CPU column of a GPU run is opbridge's CPU kernel with every core.

The boxes are a rotated detector's outputs over a 1024 x 1024 aerial image: 200 objects with
sides 10 to 120 px at random angles, each with boxes jittered around it; every box has one
likely class (score uniform in [0, 1)) and small scores for the others (exponential, mean 0.01).
"""

from __future__ import annotations

import numpy as np

from opbridge.bench import harness
from opbridge.bench.harness import F32, I64, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine
from opbridge.bench.nms import class_scores

OBJECTS = 200


def rotated_boxes(count: int) -> np.ndarray:
    rng = data_rng(31)
    centres = rng.uniform(0, 1024, (OBJECTS, 2))
    sizes = rng.uniform(10, 120, (OBJECTS, 2))
    angles = rng.uniform(-np.pi / 2, np.pi / 2, OBJECTS)
    pick = rng.integers(0, OBJECTS, count)
    centre = centres[pick] + rng.normal(0, 0.1, (count, 2)) * sizes[pick]
    size = sizes[pick] * np.exp(rng.normal(0, 0.1, (count, 2)))
    angle = angles[pick] + rng.normal(0, 0.1, count)
    return np.concatenate([centre, size, angle[:, None]], axis=1).astype(np.float32)


def _eager(boxes, scores):
    import torch

    from opbridge.ops import multiclass_nms_rotated

    return multiclass_nms_rotated(as_tensor(boxes), as_tensor(scores), 0.1, 0.05)


def dense_nms_rotated(boxes, scores, iou_threshold: float = 0.1, score_threshold: float = 0.05):
    """Multi-class rotated NMS as a PyTorch user writes it (batch 1): (0, class, box) rows, by class,
    then score, as opbridge.ops.multiclass_nms_rotated gives them."""
    import torch

    from opbridge.ops.nms_rotated import rotated_iou

    boxes, scores = boxes[0], scores[0]
    classes = scores.shape[0]
    order = torch.sort(scores, dim=1, descending=True, stable=True)[1]
    counts = (scores > score_threshold).sum(1)
    k = int(counts.max())
    rank = torch.arange(k, device=scores.device)
    index = order[:, :k]
    valid = rank[None, :] < counts[:, None]
    candidates = boxes[index]  # [classes, k, 5]
    pairs = classes * k * k
    iou = rotated_iou(candidates[:, :, None].expand(-1, -1, k, -1).reshape(pairs, 5),
                      candidates[:, None].expand(-1, k, -1, -1).reshape(pairs, 5)).view(classes, k, k)
    area = candidates[..., 2].double() * candidates[..., 3].double()
    active = torch.isfinite(candidates).all(-1) & (area > 0)  # the kernels' rule: who takes part
    hits = (iou > iou_threshold) & active[:, :, None] & active[:, None, :] & (rank[None, :] > rank[:, None])
    suppressed = ~valid
    for i in range(k):
        suppressed |= hits[:, i] & ~suppressed[:, i:i + 1]
    keep = (~suppressed).nonzero()
    selected = index[keep[:, 0], keep[:, 1]]
    return torch.stack([torch.zeros_like(selected), keep[:, 0], selected], 1)


def nms_rotated(threads: int) -> list[Case]:
    count, classes = sized((2000, 15), (300, 3))
    boxes, scores = rotated_boxes(count)[None], class_scores(classes, count, 32)[None]
    model = one_node_model("MulticlassNmsRotated", [("boxes", F32, list(boxes.shape)), ("scores", F32, list(scores.shape))],
                           [("selected", I64, ["K", 3])], domain="opbridge", iou_threshold=0.1, score_threshold=0.05)
    return [Case(
        name="nms_rotated (mmdeploy: ~190 ms)",
        opbridge=ort_engine(model, {"boxes": boxes, "scores": scores}, threads),
        # On the GPU only: on the CPU the dense float64 matrix takes seconds a run (5.5 s on 2 cores).
        torch=torch_engine(dense_nms_rotated, boxes, scores) if harness.DEVICE == "cuda" else None,
        reference=torch_engine(_eager, boxes, scores),
    )]


WORKLOADS = {"nms_rotated": nms_rotated}
