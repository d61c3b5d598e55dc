"""RoIAlign: the PyTorch op, its reference implementation, and its ONNX export mappings.

``torchvision.ops.roi_align`` (avg pooling) exports to ``opbridge::RoiAlign`` as it is;
``opbridge.ops.roi_align`` adds mmcv's "max" mode. Both compute what the C++ kernel computes.
"""

from __future__ import annotations

import math

import torch
import torchvision
from torch import Tensor

from opbridge import manifest
from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode, pooled_output


def roi_align(
    input: Tensor,
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
    mode: str = "avg",
) -> Tensor:
    """RoIAlign with average or max pooling (torchvision's arguments plus mmcv's ``mode``).

    Args:
        input: feature map [N, C, H, W], float32 or float64.
        rois: [R, 5] boxes (batch_index, x1, y1, x2, y2) in image coordinates.
        output_size: (output_height, output_width), or one int for both.
        spatial_scale: factor from image to feature coordinates (1 / stride).
        sampling_ratio: samples per bin side; <= 0 means ceil(roi_side / output_side).
        aligned: shift boxes by -0.5 pixel (pixel-centre convention) and skip the size clamp.
        mode: "avg" (torchvision and mmcv) or "max" (mmcv).

    Returns:
        [R, C, output_height, output_width]
    """
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else output_size
    return torch.ops.opbridge.roi_align(
        input, rois, float(spatial_scale), int(out_h), int(out_w), int(sampling_ratio), bool(aligned), mode
    )


@torch.library.custom_op("opbridge::roi_align", mutates_args=())
def _roi_align_op(
    input: Tensor,
    rois: Tensor,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    sampling_ratio: int,
    aligned: bool,
    mode: str,
) -> Tensor:
    manifest.load()["roi_align"].attribute("mode").check(mode, "roi_align")
    if mode == "avg":
        return torchvision.ops.roi_align(
            input, rois, (pooled_height, pooled_width), spatial_scale, sampling_ratio, aligned
        )
    return roi_align_reference(input, rois, pooled_height, pooled_width, spatial_scale, sampling_ratio, aligned, "max")


@_roi_align_op.register_fake
def _(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, mode):
    return input.new_empty((rois.shape[0], input.shape[1], pooled_height, pooled_width))


def roi_align_reference(
    input: Tensor,
    rois: Tensor,
    output_height: int,
    output_width: int,
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
    mode: str,
) -> Tensor:
    """A plain PyTorch RoIAlign, written from the spec (docs/ops/roi_align.md), one RoI at a time.

    It computes in the dtype of `input`: pass float64 tensors for a reference. Sample points and
    bilinear rules are torchvision's; the sampling is separable, so each RoI's samples are the
    outer product of its row and column sample coordinates.
    """
    n, c, h, w = input.shape
    out = input.new_zeros((rois.shape[0], c, output_height, output_width))
    offset = 0.5 if aligned else 0.0
    for r in range(rois.shape[0]):
        b, x1, y1, x2, y2 = (float(v) for v in rois[r])
        coords = [x1 * spatial_scale - offset, y1 * spatial_scale - offset,
                  x2 * spatial_scale - offset, y2 * spatial_scale - offset]
        if not all(math.isfinite(v) for v in coords):
            out[r] = float("nan")
            continue
        start_w, start_h, end_w, end_h = coords
        roi_w, roi_h = end_w - start_w, end_h - start_h
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / output_height, roi_w / output_width
        grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_h / output_height)
        grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_w / output_width)
        if grid_h <= 0 or grid_w <= 0:
            continue  # no samples: the bin is 0 in both modes
        ys = _axis_samples(start_h, bin_h, output_height, grid_h, input)
        xs = _axis_samples(start_w, bin_w, output_width, grid_w, input)
        y_lo, y_hi, ly, y_ok = _axis_taps(ys, h)
        x_lo, x_hi, lx, x_ok = _axis_taps(xs, w)
        feat = input[int(b)]
        hy, hx = 1 - ly, 1 - lx
        values = (
            feat[:, y_lo][:, :, x_lo] * (hy[:, None] * hx[None, :])
            + feat[:, y_lo][:, :, x_hi] * (hy[:, None] * lx[None, :])
            + feat[:, y_hi][:, :, x_lo] * (ly[:, None] * hx[None, :])
            + feat[:, y_hi][:, :, x_hi] * (ly[:, None] * lx[None, :])
        )
        values = torch.where(y_ok[:, None] & x_ok[None, :], values, 0.0)  # samples outside read 0
        values = values.reshape(c, output_height, grid_h, output_width, grid_w)
        if mode == "avg":
            out[r] = values.sum(dim=(2, 4)) / max(grid_h * grid_w, 1)
        else:
            # amax ignores NaN ordering subtleties; propagate NaN explicitly like torch.max.
            pooled = values.amax(dim=(2, 4))
            has_nan = values.isnan().any(dim=4).any(dim=2)
            out[r] = torch.where(has_nan, torch.full_like(pooled, float("nan")), pooled)
    return out


def _axis_samples(start: float, bin_size: float, bins: int, grid: int, like: Tensor) -> Tensor:
    """The sample coordinates along one axis, in the dtype and on the device of `like`."""
    p = torch.arange(bins, dtype=like.dtype, device=like.device)[:, None]
    i = torch.arange(grid, dtype=like.dtype, device=like.device)[None, :]
    return (start + p * bin_size + (i + 0.5) * bin_size / grid).reshape(-1)


def _axis_taps(coord: Tensor, size: int):
    """Low and high tap indices, the high tap's weight, and whether the sample is inside."""
    inside = (coord >= -1.0) & (coord <= size)
    coord = coord.clamp(min=0)
    low = coord.floor().long()
    at_edge = low >= size - 1
    low = torch.where(at_edge, torch.full_like(low, size - 1), low)
    high = torch.where(at_edge, low, low + 1)
    coord = torch.where(at_edge, low.to(coord.dtype), coord)
    return low.clamp(0, size - 1), high.clamp(0, size - 1), coord - low.to(coord.dtype), inside


# --- export mappings ----------------------------------------------------------------------------

# torchvision's roi_align (average pooling) and opbridge's (with mmcv's mode) reach the same node.
_POOLED_SIZE = {"output_height": "pooled_height", "output_width": "pooled_width"}
TORCHVISION_NODE = OneNode("opbridge::RoiAlign", torch.ops.torchvision.roi_align.default,
                           attributes={**_POOLED_SIZE, "mode": lambda arguments: "avg"}, sizes=pooled_output("input"))
NODE = OneNode("opbridge::RoiAlign", torch.ops.opbridge.roi_align.default, attributes=_POOLED_SIZE,
               sizes=pooled_output("input"))

EXPORT = ExportMapping(
    kernel="roi_align",
    dynamo={**TORCHVISION_NODE.dynamo, **NODE.dynamo},
    legacy={**TORCHVISION_NODE.legacy, **NODE.legacy},
)
