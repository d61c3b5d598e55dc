"""RoIAlignRotated workload (workloads.md: roi_align_rotated): feature [1, 256, 128, 128], 1000
rotated rois, 7x7 output, sampling 2, aligned 1, clockwise 0, through opbridge::RoiAlignRotated.

ORT has no rotated RoIAlign and neither has torch or torchvision. The PyTorch column is what a user
writes without one: each RoI's rotated 14 x 14 sampling grid from F.affine_grid, all RoIs' grids
stacked into one F.grid_sample over the map, then a 2 x 2 average per bin (the same sample points as
mmcv's sampling 2, but grid_sample's border rules, not mmcv's: timed, not compared). opbridge is
checked against opbridge.ops.roi_align_rotated's eager implementation (mmcv's numerics in plain
PyTorch, vectorised over the rois). mmdeploy's shipped op took 252-286 ms on this kind of machine
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


def affine_grid_sample(x, r, spatial_scale: float = SPATIAL_SCALE):
    """Rotated RoIAlign as a PyTorch user writes it, on tensors x [1, C, H, W] and rois r [R, 6]: the
    rotated grid of each RoI by F.affine_grid (output 7 x 7 bins of 2 x 2 samples, aligned: centres
    shifted by -0.5 px), one F.grid_sample of all the grids, a 2 x 2 average pool."""
    import torch
    import torch.nn.functional as F

    _, channels, height, width = x.shape
    cx, cy = r[:, 1] * spatial_scale - 0.5, r[:, 2] * spatial_scale - 0.5
    w, h, theta = r[:, 3] * spatial_scale, r[:, 4] * spatial_scale, r[:, 5]
    cos, sin = torch.cos(theta), torch.sin(theta)
    # Normalized output (u, v) -> box frame (u w / 2, v h / 2) -> rotated about the centre (mmcv's
    # y = yy cos - xx sin + cy, x = yy sin + xx cos + cx) -> grid_sample's normalized coordinates.
    affine = torch.stack([
        torch.stack([w / width * cos, h / width * sin, (2 * cx + 1) / width - 1], 1),
        torch.stack([-w / height * sin, h / height * cos, (2 * cy + 1) / height - 1], 1),
    ], 1)
    grids = F.affine_grid(affine, [r.shape[0], channels, 14, 14], align_corners=False)
    samples = F.grid_sample(x, grids.reshape(1, -1, 14, 2), align_corners=False)  # [1, C, R * 14, 14]
    samples = samples.reshape(channels, r.shape[0], 14, 14).transpose(0, 1)
    return F.avg_pool2d(samples, 2)


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
        torch=torch_engine(affine_grid_sample, feature, rois),
        reference=torch_engine(_eager, feature, rois),
        torch_note="torch: affine_grid + grid_sample (no PyTorch op; timed, not compared)",
    )]


WORKLOADS = {"roi_align_rotated": roi_align_rotated}
