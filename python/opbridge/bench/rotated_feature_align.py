"""Rotated feature align workload (rotated_feature_align): R3Det's feature refinement on a stride-8
map of a 1024 x 1024 aerial image, features [1, 256, 128, 128], every pixel's refined box (y, x, w,
h, angle; sides 16 to 256 px), 5 points, through opbridge::RotatedFeatureAlign.

Neither ORT nor PyTorch has the op. The PyTorch column is what a user writes without one: the 5
points of every pixel in tensor ops and one F.grid_sample of them all (bilinear, zero padding), the
samples added to the features (grid_sample's border rules, not mmcv's: timed, not compared). opbridge is
checked against opbridge.ops.rotated_feature_align's eager implementation (mmcv's numerics).
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, data_rng, one_node_model, ort_engine, sized, torch_engine

SPATIAL_SCALE = 0.125


def _boxes(side: int) -> np.ndarray:
    """Every pixel's box near its own position: (y, x, w, h, angle) in image coordinates."""
    rng = data_rng(45)
    ys, xs = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    centre = np.stack([ys, xs], -1) / SPATIAL_SCALE + rng.normal(0, 4, (side, side, 2))
    sides = rng.uniform(16, 256, (side, side, 2))
    angle = rng.uniform(-np.pi / 2, np.pi / 2, (side, side, 1))
    return np.concatenate([centre, sides, angle], -1)[None].astype(np.float32)


def _eager(features, boxes):
    from opbridge.ops import rotated_feature_align

    return rotated_feature_align(features, boxes, SPATIAL_SCALE, 5)


def _grid_sample(features, boxes):
    """The centre and 4 corners of every pixel's box, sampled by one F.grid_sample and added."""
    import torch
    import torch.nn.functional as F

    _, _, height, width = features.shape
    y, x = boxes[..., 0] * SPATIAL_SCALE, boxes[..., 1] * SPATIAL_SCALE
    w, h, a = boxes[..., 2] * SPATIAL_SCALE / 2, boxes[..., 3] * SPATIAL_SCALE / 2, boxes[..., 4]
    cos, sin = torch.cos(a), torch.sin(a)
    wx, wy, hx, hy = cos * w, sin * w, -sin * h, cos * h
    px = torch.stack([x, x + wx + hx, x - wx + hx, x - wx - hx, x + wx - hx], -1)  # [1, H, W, 5]
    py = torch.stack([y, y + wy + hy, y - wy + hy, y - wy - hy, y + wy - hy], -1)
    grid = torch.stack([px / (width - 1) * 2 - 1, py / (height - 1) * 2 - 1], -1).reshape(1, height, width * 5, 2)
    samples = F.grid_sample(features, grid, align_corners=True).reshape(*features.shape, 5)
    return features + samples.sum(-1)


def rotated_feature_align(threads: int) -> list[Case]:
    channels, side = sized((256, 128), (8, 24))
    features = data_rng(44).standard_normal((1, channels, side, side), dtype=np.float32)
    boxes = _boxes(side)
    model = one_node_model(
        "RotatedFeatureAlign", [("features", F32, features.shape), ("best_rbboxes", F32, boxes.shape)],
        [("output", F32, list(features.shape))], domain="opbridge", spatial_scale=SPATIAL_SCALE, points=5,
    )
    return [Case(
        name="rotated_feature_align 5 points",
        opbridge=ort_engine(model, {"features": features, "best_rbboxes": boxes}, threads),
        torch=torch_engine(_grid_sample, features, boxes),
        reference=torch_engine(_eager, features, boxes),
        torch_note="torch: grid_sample at the 5 points (no PyTorch op; timed, not compared)",
    )]


WORKLOADS = {"rotated_feature_align": rotated_feature_align}
