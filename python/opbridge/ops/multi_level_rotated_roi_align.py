"""Multi-level rotated RoIAlign: mmrotate's RotatedSingleRoIExtractor (over mmcv's
RoIAlignRotated) as one PyTorch op and one ONNX node.

mmrotate's two-stage detectors pool their rotated RoIs with ``RotatedSingleRoIExtractor``: every
RoI (batch_index, cx, cy, w, h, theta) is assigned to a feature map by sqrt(w * h) (the
finest_scale rule), its w and h optionally multiplied by a factor (``roi_rescale``), and it is
pooled from its map by mmcv's ``RoIAlignRotated`` at 1 / stride. mmdeploy exports that for
TensorRT as one ``mmdeploy::MMCVMultiLevelRotatedRoiAlign`` node.
``opbridge.ops.multi_level_rotated_roi_align`` computes it with mmrotate's numerics and exports to
``opbridge::MultiLevelRotatedRoiAlign`` (``compat="mmdeploy"``:
``mmdeploy::MMCVMultiLevelRotatedRoiAlign``, same inputs and attributes).
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode, pooled_output
from opbridge.ops.multi_level_roi_align import MAX_EXPORT_LEVELS, MAX_LEVELS, pool_by_level, rescales
from opbridge.ops.roi_align_rotated import roi_align_rotated_eager


def multi_level_rotated_roi_align(
    features: Sequence[Tensor],
    rois: Tensor,
    output_size: int | tuple[int, int],
    featmap_strides: Sequence[float],
    sampling_ratio: int = 0,
    aligned: bool = True,
    clockwise: bool = False,
    finest_scale: int = 56,
    roi_scale_factor: float | None = None,
) -> Tensor:
    """mmrotate's RotatedSingleRoIExtractor on RoIs (batch_index, cx, cy, w, h, theta).

    The arguments are those of its config: ``roi_layer=dict(type="RoIAlignRotated", output_size,
    sampling_ratio, aligned, clockwise)``, ``featmap_strides``, ``finest_scale``, and forward()'s
    ``roi_scale_factor``; mmcv's RoIAlignRotated defaults.

    Args:
        features: the feature maps [N, C, H_l, W_l], finest first, one per stride (1 to 10).
        rois: [R, 6] in image coordinates, theta in radians.
        output_size: (output_height, output_width), or one int for both.
        featmap_strides: the stride of every feature map (its spatial scale is 1 / stride).
        sampling_ratio: samples per bin side; <= 0: adaptive, ceil(roi_side / output_side).
        aligned: mmcv's aligned flag (centre shifted by -0.5 pixel, no size clamp).
        clockwise: negate theta.
        finest_scale: the box scale below which RoIs go to the finest map (mmrotate: 56).
        roi_scale_factor: None, or a factor w and h are multiplied by after the level is chosen
            (mmrotate's roi_rescale). With one feature map mmrotate ignores it.

    Returns:
        [R, C, output_height, output_width]
    """
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else output_size
    if roi_scale_factor is not None and not (math.isfinite(roi_scale_factor) and roi_scale_factor > 0):
        raise ValueError(f"multi_level_rotated_roi_align: roi_scale_factor must be None or a finite number > 0, "
                         f"got {roi_scale_factor}")
    return torch.ops.opbridge.multi_level_rotated_roi_align(
        list(features), rois, int(out_h), int(out_w), [float(s) for s in featmap_strides], int(sampling_ratio),
        bool(aligned), bool(clockwise), int(finest_scale),
        -1.0 if roi_scale_factor is None else float(roi_scale_factor))


@torch.library.custom_op("opbridge::multi_level_rotated_roi_align", mutates_args=())
def _multi_level_rotated_roi_align_op(
    features: list[Tensor], rois: Tensor, output_height: int, output_width: int, featmap_strides: list[float],
    sampling_ratio: int, aligned: bool, clockwise: bool, finest_scale: int, roi_scale_factor: float,
) -> Tensor:
    _check_arguments(features, rois, featmap_strides, finest_scale, roi_scale_factor)
    return multi_level_rotated_roi_align_eager(features, rois, output_height, output_width, featmap_strides,
                                               sampling_ratio, aligned, clockwise, finest_scale, roi_scale_factor)


@_multi_level_rotated_roi_align_op.register_fake
def _(features, rois, output_height, output_width, featmap_strides, sampling_ratio, aligned, clockwise, finest_scale,
      roi_scale_factor):
    _check_arguments(features, rois, featmap_strides, finest_scale, roi_scale_factor)
    return features[0].new_empty((rois.shape[0], features[0].shape[1], output_height, output_width))


def _check_arguments(features, rois, featmap_strides, finest_scale, roi_scale_factor) -> None:
    """The node's attribute and shape rules, as errors at trace time rather than in ORT."""
    name = "multi_level_rotated_roi_align"
    if not 1 <= len(featmap_strides) <= MAX_LEVELS or len(features) != len(featmap_strides):
        raise ValueError(f"{name}: {len(features)} feature maps and {len(featmap_strides)} strides; "
                         f"they must agree, 1 to {MAX_LEVELS}")
    if not all(math.isfinite(s) and s > 0 for s in featmap_strides):
        raise ValueError(f"{name}: featmap_strides must be finite numbers > 0, got {list(featmap_strides)}")
    if finest_scale < 1:
        raise ValueError(f"{name}: finest_scale must be >= 1, got {finest_scale}")
    if not math.isfinite(roi_scale_factor):
        raise ValueError(f"{name}: roi_scale_factor must be finite, got {roi_scale_factor}")
    if rois.dim() != 2 or rois.shape[1] != 6:
        raise ValueError(f"{name}: rois must have shape [R, 6], got {list(rois.shape)}")


def map_rotated_roi_levels(rois: Tensor, num_levels: int, finest_scale: int) -> Tensor:
    """mmrotate's RotatedSingleRoIExtractor.map_roi_levels (scale = sqrt(w * h)), in the dtype of
    `rois`; -1 where the level is NaN (a NaN w or h, or exactly one of them negative), which
    mmrotate's .long() turns into a value that matches no level, so that the RoI keeps a zero row."""
    scale = torch.sqrt(rois[:, 3] * rois[:, 4])
    levels = torch.floor(torch.log2(scale / finest_scale + 1e-6)).clamp(min=0, max=num_levels - 1)
    return torch.where(levels.isnan(), -1.0, levels).long()


def rotated_roi_rescale(rois: Tensor, scale_factor: float) -> Tensor:
    """mmrotate's RotatedSingleRoIExtractor.roi_rescale: w and h multiplied by the factor."""
    rescaled = rois.clone()
    rescaled[:, 3] = scale_factor * rescaled[:, 3]
    rescaled[:, 4] = scale_factor * rescaled[:, 4]
    return rescaled


def multi_level_rotated_roi_align_eager(features, rois, output_height, output_width, featmap_strides,
                                        sampling_ratio, aligned, clockwise, finest_scale, roi_scale_factor):
    """mmrotate's RotatedSingleRoIExtractor.forward, step for step, over opbridge's
    roi_align_rotated eager (mmcv's numerics)."""

    def pool(feature, level_rois, stride):
        return roi_align_rotated_eager(feature, level_rois, output_height, output_width, 1.0 / stride,
                                       sampling_ratio, aligned, clockwise)

    if len(features) == 1:  # mmrotate: no level mapping, no rescaling
        return pool(features[0], rois, featmap_strides[0])
    levels = map_rotated_roi_levels(rois, len(features), finest_scale)
    if rescales(roi_scale_factor):
        rois = rotated_roi_rescale(rois, roi_scale_factor)
    return pool_by_level(features, featmap_strides, rois, levels, (output_height, output_width), pool)


# --- export mappings ----------------------------------------------------------------------------
# The node carries the attributes as mmdeploy's exporter writes them, except output_height and
# output_width, which it swaps (see the op pages).

NODE = OneNode("opbridge::MultiLevelRotatedRoiAlign", torch.ops.opbridge.multi_level_rotated_roi_align.default,
               sizes=pooled_output("features"), like="features", max_dynamo_count=MAX_EXPORT_LEVELS,
               max_count=MAX_LEVELS)

EXPORT = ExportMapping(kernel="multi_level_rotated_roi_align", dynamo=NODE.dynamo, legacy=NODE.legacy)
