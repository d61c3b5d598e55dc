"""Multi-level RoIAlign: mmdet's SingleRoIExtractor (over mmcv's RoIAlign) as one PyTorch op and
one ONNX node.

mmdet's two-stage detectors pool their RoIs with ``SingleRoIExtractor``: every RoI is assigned to
a feature map by its size (``map_roi_levels``, the finest_scale rule), optionally rescaled about
its centre (``roi_rescale``), and pooled from its map by mmcv's ``RoIAlign`` at 1 / stride.
mmdeploy exports that for TensorRT as one ``mmdeploy::MMCVMultiLevelRoiAlign`` node.
``opbridge.ops.multi_level_roi_align`` computes it with mmdet's numerics and exports to
``opbridge::MultiLevelRoiAlign`` (``compat="mmdeploy"``: ``mmdeploy::MMCVMultiLevelRoiAlign``, same
inputs and attributes).
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torchvision
from torch import Tensor

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode, pooled_output

MAX_LEVELS = 10  # feature maps one node takes (the TensorRT plugin's limit)
MAX_EXPORT_LEVELS = 5  # feature maps the dynamo exporter's translations take (mmdet's FPNs use up to 5)
POOL_MODES = {"max": 0, "avg": 1}  # the node's pool_mode codes (mmdeploy's exporter: "max" -> 0, else 1)


def multi_level_roi_align(
    features: Sequence[Tensor],
    rois: Tensor,
    output_size: int | tuple[int, int],
    featmap_strides: Sequence[float],
    sampling_ratio: int = 0,
    pool_mode: str = "avg",
    aligned: bool = True,
    finest_scale: int = 56,
    roi_scale_factor: float | None = None,
) -> Tensor:
    """mmdet's SingleRoIExtractor on RoIs (batch_index, x1, y1, x2, y2).

    The arguments are those of its config: ``roi_layer=dict(type="RoIAlign", output_size,
    sampling_ratio, pool_mode, aligned)``, ``featmap_strides``, ``finest_scale``, and forward()'s
    ``roi_scale_factor``; mmcv's RoIAlign defaults.

    Args:
        features: the feature maps [N, C, H_l, W_l], finest first, one per stride (1 to 10).
        rois: [R, 5] in image coordinates.
        output_size: (output_height, output_width), or one int for both.
        featmap_strides: the stride of every feature map (its spatial scale is 1 / stride).
        sampling_ratio: samples per bin side; <= 0: adaptive, ceil(roi_side / output_side).
        pool_mode: "avg" or "max" (mmcv's RoIAlign: the maximum of the interpolated samples).
        aligned: mmcv's aligned flag (pixel centres at +0.5, no size clamp).
        finest_scale: the box scale below which RoIs go to the finest map (mmdet: 56).
        roi_scale_factor: None, or a factor the boxes are scaled by about their centres after the
            level is chosen (mmdet's roi_rescale). With one feature map mmdet ignores it.

    Returns:
        [R, C, output_height, output_width]
    """
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else output_size
    if roi_scale_factor is not None and not (math.isfinite(roi_scale_factor) and roi_scale_factor > 0):
        raise ValueError(f"multi_level_roi_align: roi_scale_factor must be None or a finite number > 0, "
                         f"got {roi_scale_factor}")
    return torch.ops.opbridge.multi_level_roi_align(
        list(features), rois, int(out_h), int(out_w), [float(s) for s in featmap_strides], int(sampling_ratio),
        str(pool_mode), bool(aligned), int(finest_scale), -1.0 if roi_scale_factor is None else float(roi_scale_factor))


@torch.library.custom_op("opbridge::multi_level_roi_align", mutates_args=())
def _multi_level_roi_align_op(
    features: list[Tensor], rois: Tensor, output_height: int, output_width: int, featmap_strides: list[float],
    sampling_ratio: int, pool_mode: str, aligned: bool, finest_scale: int, roi_scale_factor: float,
) -> Tensor:
    _check_arguments(features, rois, featmap_strides, pool_mode, finest_scale, roi_scale_factor)
    return multi_level_roi_align_eager(features, rois, output_height, output_width, featmap_strides, sampling_ratio,
                                       pool_mode, aligned, finest_scale, roi_scale_factor)


@_multi_level_roi_align_op.register_fake
def _(features, rois, output_height, output_width, featmap_strides, sampling_ratio, pool_mode, aligned, finest_scale,
      roi_scale_factor):
    _check_arguments(features, rois, featmap_strides, pool_mode, finest_scale, roi_scale_factor)
    return features[0].new_empty((rois.shape[0], features[0].shape[1], output_height, output_width))


def _check_arguments(features, rois, featmap_strides, pool_mode, finest_scale, roi_scale_factor) -> None:
    """The node's attribute and shape rules, as errors at trace time rather than in ORT."""
    if not 1 <= len(featmap_strides) <= MAX_LEVELS or len(features) != len(featmap_strides):
        raise ValueError(f"multi_level_roi_align: {len(features)} feature maps and {len(featmap_strides)} strides; "
                         f"they must agree, 1 to {MAX_LEVELS}")
    if not all(math.isfinite(s) and s > 0 for s in featmap_strides):
        raise ValueError("multi_level_roi_align: featmap_strides must be finite numbers > 0, "
                         f"got {list(featmap_strides)}")
    if pool_mode not in POOL_MODES:
        raise ValueError(f'multi_level_roi_align: pool_mode must be "avg" or "max", got "{pool_mode}"')
    if finest_scale < 1:
        raise ValueError(f"multi_level_roi_align: finest_scale must be >= 1, got {finest_scale}")
    if not math.isfinite(roi_scale_factor):
        raise ValueError(f"multi_level_roi_align: roi_scale_factor must be finite, got {roi_scale_factor}")
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise ValueError(f"multi_level_roi_align: rois must have shape [R, 5], got {list(rois.shape)}")


def map_roi_levels(rois: Tensor, num_levels: int, finest_scale: int) -> Tensor:
    """mmdet's SingleRoIExtractor.map_roi_levels, in the dtype of `rois`; -1 where the level is NaN
    (a NaN coordinate or a negative area), which mmdet's .long() turns into a value that matches
    no level (INT64_MIN on x86), so that the RoI keeps a zero row."""
    scale = torch.sqrt((rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2]))
    levels = torch.floor(torch.log2(scale / finest_scale + 1e-6)).clamp(min=0, max=num_levels - 1)
    return torch.where(levels.isnan(), -1.0, levels).long()


def roi_rescale(rois: Tensor, scale_factor: float) -> Tensor:
    """mmdet's BaseRoIExtractor.roi_rescale (sides scaled about the centre, no +1 convention)."""
    cx = (rois[:, 1] + rois[:, 3]) * 0.5
    cy = (rois[:, 2] + rois[:, 4]) * 0.5
    new_w = (rois[:, 3] - rois[:, 1]) * scale_factor
    new_h = (rois[:, 4] - rois[:, 2]) * scale_factor
    return torch.stack((rois[:, 0], cx - new_w * 0.5, cy - new_h * 0.5, cx + new_w * 0.5, cy + new_h * 0.5), dim=-1)


def rescales(roi_scale_factor: float) -> bool:
    """Whether the op rescales: a factor > 0 other than 1 (mmdeploy writes 1 for mmdet's None)."""
    return roi_scale_factor > 0 and roi_scale_factor != 1.0


def multi_level_roi_align_eager(features, rois, output_height, output_width, featmap_strides, sampling_ratio,
                                pool_mode, aligned, finest_scale, roi_scale_factor):
    """mmdet's SingleRoIExtractor.forward, step for step: torchvision's roi_align for "avg" (mmcv's
    RoIAlign computes the same), opbridge's for "max"."""
    output_size = (output_height, output_width)

    def pool(feature, level_rois, stride):
        if pool_mode == "avg":
            return torchvision.ops.roi_align(feature, level_rois, output_size, 1.0 / stride, sampling_ratio, aligned)
        return torch.ops.opbridge.roi_align(feature, level_rois, 1.0 / stride, output_height, output_width,
                                            sampling_ratio, aligned, "max")

    if len(features) == 1:  # mmdet: no level mapping, no rescaling
        return pool(features[0], rois, featmap_strides[0])
    levels = map_roi_levels(rois, len(features), finest_scale)
    if rescales(roi_scale_factor):
        rois = roi_rescale(rois, roi_scale_factor)
    return pool_by_level(features, featmap_strides, rois, levels, output_size, pool)


def pool_by_level(features, featmap_strides, rois, levels, output_size, pool):
    """The extractors' loop (mmdet's SingleRoIExtractor, mmrotate's RotatedSingleRoIExtractor): each
    level's RoIs pooled from its map with pool(feature, rois, stride) into their rows of a zero
    output, so that a RoI without a level keeps a zero row."""
    result = features[0].new_zeros((rois.shape[0], features[0].shape[1]) + tuple(output_size))
    for level, (feature, stride) in enumerate(zip(features, featmap_strides)):
        index = torch.where(levels == level)[0]
        if index.numel() > 0:
            result[index] = pool(feature, rois[index], stride).to(result.dtype)
    return result


# --- export mappings ----------------------------------------------------------------------------
# The node carries the attributes as mmdeploy's exporter writes them, except output_height and
# output_width, which it swaps (see the op pages).

NODE = OneNode("opbridge::MultiLevelRoiAlign", torch.ops.opbridge.multi_level_roi_align.default,
               attributes={"pool_mode": lambda arguments: POOL_MODES[arguments.pool_mode]},
               sizes=pooled_output("features"), like="features", max_dynamo_count=MAX_EXPORT_LEVELS,
               max_count=MAX_LEVELS)

EXPORT = ExportMapping(kernel="multi_level_roi_align", dynamo=NODE.dynamo, legacy=NODE.legacy)
