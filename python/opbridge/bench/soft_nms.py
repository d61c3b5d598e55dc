"""Soft-NMS workload (workloads.md: soft_nms.dense). Neither ORT nor PyTorch has soft-NMS.

On the CPU the times are absolute (mmcv's own op took 48 / 84 ms, peer_baseline.md). On the GPU the
competitors are what a PyTorch user has there: mmcv's algorithm as a Python loop of tensor ops on
CUDA (opbridge.ops.soft_nms's eager implementation, the same results) and opbridge's CPU kernel
(the bench's CPU column)."""

from __future__ import annotations

import numpy as np

from opbridge.bench import harness
from opbridge.bench.harness import F32, I64, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine


def _dense_boxes(count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` boxes (a multiple of 10) jittered around count / 10 centres of an 800x1216 image,
    uniform scores."""
    rng = data_rng(5)
    centres = rng.uniform([0, 0], [1216, 800], (count // 10, 2))
    sizes = rng.uniform(32, 256, (count // 10, 2))
    centre = np.repeat(centres, 10, axis=0) + rng.normal(0, 0.1, (count, 2)) * np.repeat(sizes, 10, axis=0)
    size = np.repeat(sizes, 10, axis=0) * np.exp(rng.normal(0, 0.1, (count, 2)))
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    boxes = np.clip(boxes, 0, [1216, 800, 1216, 800])
    order = rng.permutation(count)
    scores = rng.uniform(0, 1, count)
    return boxes[order].astype(np.float32), scores.astype(np.float32)


def _eager_soft_nms(boxes, scores, method):
    import torch

    from opbridge.ops import soft_nms

    return soft_nms(as_tensor(boxes), as_tensor(scores), 0.3, 0.5, 1e-3, method)


def soft_nms_dense(threads: int) -> list[Case]:
    """soft_nms.dense: 5000 boxes, linear and gaussian. No competitor exists on the CPU (neither ORT
    nor PyTorch has soft-NMS): opbridge's own eager PyTorch op is run once, untimed, as the check.
    On the GPU that eager op on CUDA tensors is timed too: what a PyTorch user runs there."""
    count = sized(5000, 300)
    boxes, scores = _dense_boxes(count)
    cases = []
    for method in ("linear", "gaussian"):
        model = one_node_model(
            "SoftNonMaxSuppression", [("boxes", F32, [count, 4]), ("scores", F32, [count])],
            [("dets", F32, ["K", 5]), ("inds", I64, ["K"])], domain="opbridge",
            iou_threshold=0.3, sigma=0.5, min_score=1e-3, method={"linear": 1, "gaussian": 2}[method], offset=0,
        )
        eager = torch_engine(_eager_soft_nms, boxes, scores, method)
        cases.append(Case(
            name=f"soft_nms.dense {method}",
            opbridge=ort_engine(model, {"boxes": boxes, "scores": scores}, threads),
            torch=eager if harness.DEVICE == "cuda" else None,
            reference=eager,
        ))
    return cases


WORKLOADS = {"soft_nms.dense": soft_nms_dense}
