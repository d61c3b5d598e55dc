"""RoIAlignRotated workload (workloads.md: roi_align_rotated): feature [1, 256, 128, 128], 1000
rotated rois, 7x7 output, sampling 2, aligned 1, clockwise 0, through opbridge::RoiAlignRotated.

ORT has no rotated RoIAlign and neither has torch or torchvision: the PyTorch column is
opbridge.ops.roi_align_rotated's eager implementation (mmcv's numerics in plain PyTorch,
vectorised over the rois), and mmdeploy's shipped op took 252-286 ms on this kind of machine
(peer_baseline.md).

The feature is a rotated detector's stride-8 map of a 1024 x 1024 aerial image (spatial scale
1/8); the rois are proposals inside it with sides 16 to 256 px at random angles.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine

SPATIAL_SCALE = 0.125


def rotated_rois(count: int) -> np.ndarray:
    rng = data_rng(41)
    centre = rng.uniform(0, 1024, (count, 2))
    sides = rng.uniform(16, 256, (count, 2))
    theta = rng.uniform(-np.pi, np.pi, (count, 1))
    return np.concatenate([np.zeros((count, 1)), centre, sides, theta], axis=1).astype(np.float32)


def _eager(feature, rois):
    import torch

    from opbridge.ops import roi_align_rotated

    return roi_align_rotated(as_tensor(feature), as_tensor(rois), 7, SPATIAL_SCALE, 2, True, False)


def roi_align_rotated(threads: int) -> list[Case]:
    channels, count = sized((256, 1000), (8, 50))
    feature = data_rng(40).standard_normal((1, channels, 128, 128), dtype=np.float32)
    rois = rotated_rois(count)
    model = one_node_model(
        "RoiAlignRotated", [("input", F32, feature.shape), ("rois", F32, rois.shape)],
        [("output", F32, [count, channels, 7, 7])], domain="opbridge", output_height=7, output_width=7,
        spatial_scale=SPATIAL_SCALE, sampling_ratio=2, aligned=1, clockwise=0,
    )
    return [Case(
        name="roi_align_rotated (mmdeploy: 252-286 ms)",
        opbridge=ort_engine(model, {"input": feature, "rois": rois}, threads),
        torch=torch_engine(_eager, feature, rois),
        torch_note="torch: opbridge's eager op (no PyTorch one)",
    )]


WORKLOADS = {"roi_align_rotated": roi_align_rotated}
