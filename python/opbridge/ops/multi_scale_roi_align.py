"""Multi-scale RoIAlign: torchvision's MultiScaleRoIAlign as one PyTorch op and one ONNX node.

torchvision's R-CNN models pool their RoIs with ``torchvision.ops.MultiScaleRoIAlign``, whose core
(``poolers._multiscale_roi_align``) assigns every RoI to a pyramid level and runs one RoIAlign per
level on the RoIs of that level: data-dependent sizes torch.export cannot trace, and a graph of
RoiAlign, gather and scatter nodes with the legacy exporter. Inside ``opbridge.export`` that core
is replaced by ``opbridge.ops.multi_scale_roi_align``, a ``torch.library`` op with torchvision's
numerics and a fake implementation, which exports to one ``opbridge::MultiScaleRoiAlign`` node.
"""

from __future__ import annotations

from typing import Sequence

import torch
import torchvision
from torch import Tensor
from torchvision.ops import poolers

from opbridge.ops._onnx import ExportMapping, FunctionPatch, float32_of_half
from opbridge.ops._one_node import OneNode, pooled_output

MAX_LEVELS = 5  # feature maps one exported node takes (torchvision's FPNs use up to 4, mmdet's 5)


def multi_scale_roi_align(
    features: list[Tensor],
    rois: Tensor,
    output_size: int | tuple[int, int],
    sampling_ratio: int,
    spatial_scales: list[float],
    canonical_scale: int = 224,
    canonical_level: int = 4,
    aligned: bool = False,
) -> Tensor:
    """torchvision's multi-scale RoIAlign on RoIs (batch_index, x1, y1, x2, y2).

    Args:
        features: the pyramid's feature maps [N, C, H_l, W_l], finest first.
        rois: [R, 5] in image coordinates.
        output_size: (output_height, output_width), or one int for both.
        sampling_ratio: samples per bin side; <= 0: adaptive.
        spatial_scales: one per feature map (1 / stride), as MultiScaleRoIAlign infers them.
        canonical_scale, canonical_level: the level mapper's (FPN paper, eq. 1).
        aligned: RoIAlign's aligned flag (torchvision's MultiScaleRoIAlign uses False).

    Returns:
        [R, C, output_height, output_width]
    """
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else output_size
    return torch.ops.opbridge.multi_scale_roi_align(
        list(features), rois, int(out_h), int(out_w), int(sampling_ratio), [float(s) for s in spatial_scales],
        int(canonical_scale), int(canonical_level), bool(aligned))


def level_range(spatial_scales: Sequence[float]) -> tuple[int, int]:
    """The (k_min, k_max) torchvision's _setup_scales derives from the first and the last scale."""
    k_min = -torch.log2(torch.tensor(spatial_scales[0], dtype=torch.float32)).item()
    k_max = -torch.log2(torch.tensor(spatial_scales[-1], dtype=torch.float32)).item()
    return int(k_min), int(k_max)


@torch.library.custom_op("opbridge::multi_scale_roi_align", mutates_args=())
def _multi_scale_roi_align_op(
    features: list[Tensor], rois: Tensor, output_height: int, output_width: int, sampling_ratio: int,
    spatial_scales: list[float], canonical_scale: int, canonical_level: int, aligned: bool,
) -> Tensor:
    if len(features) != len(spatial_scales) or not features:
        raise ValueError(f"multi_scale_roi_align: {len(features)} feature maps but {len(spatial_scales)} scales")
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise ValueError(f"multi_scale_roi_align: rois must have shape [R, 5], got {list(rois.shape)}")
    # Half maps and RoIs: in float32 on their values, rounded once, as opbridge::MultiScaleRoiAlign
    # computes (torchvision's roi_align on half CPU tensors computes in half).
    (rois, *features), half = float32_of_half(rois, *features)
    pooled = multi_scale_roi_align_eager(features, rois, output_height, output_width, sampling_ratio, spatial_scales,
                                         canonical_scale, canonical_level, aligned)
    return pooled if half is None else pooled.to(half)


@_multi_scale_roi_align_op.register_fake
def _(features, rois, output_height, output_width, sampling_ratio, spatial_scales, canonical_scale, canonical_level,
      aligned):
    return features[0].new_empty((rois.shape[0], features[0].shape[1], output_height, output_width))


def multi_scale_roi_align_eager(features, rois, output_height, output_width, sampling_ratio, spatial_scales,
                                canonical_scale, canonical_level, aligned):
    """torchvision's _multiscale_roi_align, step for step, on RoIs with their batch indices."""
    output_size = (output_height, output_width)
    if len(features) == 1:
        return torchvision.ops.roi_align(features[0], rois, output_size, spatial_scales[0], sampling_ratio, aligned)
    k_min, k_max = level_range(spatial_scales)
    levels = poolers.LevelMapper(k_min, k_max, canonical_scale, canonical_level)([rois[:, 1:]])
    result = features[0].new_zeros((rois.shape[0], features[0].shape[1]) + output_size)
    for level, (feature, scale) in enumerate(zip(features, spatial_scales)):
        index = torch.where(levels == level)[0]
        pooled = torchvision.ops.roi_align(feature, rois[index], output_size, scale, sampling_ratio, aligned)
        result[index] = pooled.to(result.dtype)
    return result


def pooler_arguments(x_filtered, output_size, sampling_ratio, scales, mapper) -> tuple:
    """multi_scale_roi_align's arguments after features and RoIs for a torchvision MultiScaleRoIAlign
    (its output size, sampling ratio, scales and level mapper), checked to be what the op computes."""
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    if len(x_filtered) > MAX_LEVELS:
        raise ValueError(f"opbridge.export: MultiScaleRoIAlign over {len(x_filtered)} feature maps; "
                         f"opbridge::MultiScaleRoiAlign takes at most {MAX_LEVELS}")
    if len(x_filtered) > 1 and ((mapper.k_min, mapper.k_max) != level_range(scales) or mapper.eps != 1e-6):
        raise ValueError("opbridge.export: this MultiScaleRoIAlign's level mapper (k_min, k_max, eps = "
                         f"{mapper.k_min}, {mapper.k_max}, {mapper.eps}) is not the one torchvision derives from "
                         f"its scales {list(scales)}; opbridge::MultiScaleRoiAlign computes torchvision's")
    return tuple(output_size), sampling_ratio, scales, mapper.s0, mapper.lvl0


def _multiscale_roi_align_replacement(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    """What torchvision.ops.poolers._multiscale_roi_align becomes inside opbridge.export."""
    arguments = pooler_arguments(x_filtered, output_size, sampling_ratio, scales, mapper)
    return multi_scale_roi_align(x_filtered, poolers._convert_to_roi_format(boxes), *arguments)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::MultiScaleRoiAlign", torch.ops.opbridge.multi_scale_roi_align.default,
               sizes=pooled_output("features"), like="features", max_dynamo_count=MAX_LEVELS, max_count=MAX_LEVELS)

EXPORT = ExportMapping(
    kernel="multi_scale_roi_align",
    dynamo=NODE.dynamo,
    legacy=NODE.legacy,
    patches=(FunctionPatch(poolers._multiscale_roi_align, _multiscale_roi_align_replacement),),
)
