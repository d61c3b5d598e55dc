"""Multi-level rotated RoIAlign workload (multi_level_rotated_roi_align): mmrotate's
RotatedSingleRoIExtractor on the FPN maps of a 1024 x 1024 aerial image ([1, 256, 256, 256] to
[1, 256, 32, 32], strides 4 to 32), 1000 rotated proposals of sides 16 to 512 px at random angles,
7x7 output, sampling 2, aligned, finest_scale 56, through opbridge::MultiLevelRotatedRoiAlign.

Neither ORT nor PyTorch has the op. The PyTorch column is what a user writes without one:
mmrotate's level rule in tensor ops, then each level's RoIs by F.affine_grid + F.grid_sample (the
rotated RoIAlign competitor of roi_align_rotated.py: the same sample points, grid_sample's border
rules: timed, not compared). opbridge is checked against opbridge.ops.multi_level_rotated_roi_align's
eager implementation (mmrotate's steps over mmcv's numerics).
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, data_rng, one_node_model, ort_engine, sized, torch_engine
from opbridge.bench.roi_align_rotated import affine_grid_sample

STRIDES = (4.0, 8.0, 16.0, 32.0)
FINEST_SCALE = 56


def _rois(count: int, image: int) -> np.ndarray:
    rng = data_rng(43)
    centre = rng.uniform(0, image, (count, 2))
    sides = np.exp(rng.uniform(np.log(16), np.log(512), (count, 2)))  # every level gets RoIs
    theta = rng.uniform(-np.pi, np.pi, (count, 1))
    return np.concatenate([np.zeros((count, 1)), centre, sides, theta], axis=1).astype(np.float32)


def _eager(rois, *features):
    from opbridge.ops import multi_level_rotated_roi_align

    return multi_level_rotated_roi_align(list(features), rois, 7, STRIDES, 2, True, False, FINEST_SCALE)


def _levels_and_grid_sample(rois, *features):
    """mmrotate's level rule (floor(log2(sqrt(w h) / finest_scale + 1e-6)), clamped), then each level's
    RoIs pooled by affine_grid + grid_sample into their rows."""
    import torch

    scale = torch.sqrt(rois[:, 3] * rois[:, 4])
    levels = torch.floor(torch.log2(scale / FINEST_SCALE + 1e-6)).clamp(0, len(features) - 1).long()
    output = rois.new_zeros((rois.shape[0], features[0].shape[1], 7, 7))
    for level, (feature, stride) in enumerate(zip(features, STRIDES)):
        rows = torch.nonzero(levels == level).flatten()
        if len(rows):  # affine_grid takes no empty batch
            output[rows] = affine_grid_sample(feature, rois[rows], 1.0 / stride)
    return output


def multi_level_rotated_roi_align(threads: int) -> list[Case]:
    channels, count, image = sized((256, 1000, 1024), (8, 60, 256))
    rng = data_rng(42)
    features = [rng.standard_normal((1, channels, int(image / s), int(image / s)), dtype=np.float32) for s in STRIDES]
    rois = _rois(count, image)
    inputs = [("rois", F32, rois.shape)] + [(f"feature{k}", F32, f.shape) for k, f in enumerate(features)]
    model = one_node_model(
        "MultiLevelRotatedRoiAlign", inputs, [("output", F32, [count, channels, 7, 7])], domain="opbridge",
        output_height=7, output_width=7, sampling_ratio=2, aligned=1, clockwise=0, featmap_strides=list(STRIDES),
        finest_scale=FINEST_SCALE,
    )
    feeds = {"rois": rois, **{f"feature{k}": f for k, f in enumerate(features)}}
    return [Case(
        name="multi_level_rotated_roi_align 4 maps",
        opbridge=ort_engine(model, feeds, threads),
        torch=torch_engine(_levels_and_grid_sample, rois, *features),
        reference=torch_engine(_eager, rois, *features),
        torch_note="torch: affine_grid + grid_sample (no PyTorch op; timed, not compared)",
    )]


WORKLOADS = {"multi_level_rotated_roi_align": multi_level_rotated_roi_align}
