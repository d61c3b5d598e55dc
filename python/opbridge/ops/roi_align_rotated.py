"""RoIAlignRotated: the PyTorch op (mmcv's ``roi_align_rotated`` numerics) and its ONNX export mappings.

torchvision has no rotated RoIAlign, so ``opbridge.ops.roi_align_rotated`` is a torch.library op
whose eager implementation computes what mmcv's kernel and opbridge's C++ kernel compute, in the
dtype of its input. It exports to ``opbridge::RoiAlignRotated`` (``compat="mmcv"`` or
``"mmdeploy"``: ``MMCVRoIAlignRotated`` in that domain).
"""

from __future__ import annotations

import torch
from torch import Tensor

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode, pooled_output


def roi_align_rotated(
    input: Tensor,
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = 0,
    aligned: bool = True,
    clockwise: bool = False,
) -> Tensor:
    """RoIAlign of rotated boxes, with mmcv.ops.roi_align_rotated's arguments and numerics.

    Args:
        input: feature map [N, C, H, W], float32 or float64.
        rois: [R, 6] rotated boxes (batch_index, center_x, center_y, width, height, theta) in image
            coordinates, theta in radians (counter-clockwise in image coordinates unless clockwise).
        output_size: (output_height, output_width), or one int for both.
        spatial_scale: factor from image to feature coordinates (1 / stride).
        sampling_ratio: samples per bin side; <= 0 means ceil(side / output_side).
        aligned: shift the centre by -0.5 pixel (pixel-centre convention) and skip the size clamp.
        clockwise: negate theta.

    Returns:
        [R, C, output_height, output_width]
    """
    out_h, out_w = (output_size, output_size) if isinstance(output_size, int) else output_size
    return torch.ops.opbridge.roi_align_rotated(
        input, rois, int(out_h), int(out_w), float(spatial_scale), int(sampling_ratio), bool(aligned), bool(clockwise)
    )


@torch.library.custom_op("opbridge::roi_align_rotated", mutates_args=())
def _roi_align_rotated_op(
    input: Tensor,
    rois: Tensor,
    output_height: int,
    output_width: int,
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
    clockwise: bool,
) -> Tensor:
    if input.dim() != 4 or rois.dim() != 2 or rois.shape[1] != 6:
        raise ValueError(f"roi_align_rotated: input must be [N, C, H, W] and rois [R, 6], got "
                         f"{list(input.shape)} and {list(rois.shape)}")
    return roi_align_rotated_eager(input, rois, output_height, output_width, spatial_scale, sampling_ratio,
                                   aligned, clockwise)


@_roi_align_rotated_op.register_fake
def _(input, rois, output_height, output_width, spatial_scale, sampling_ratio, aligned, clockwise):
    return input.new_empty((rois.shape[0], input.shape[1], output_height, output_width))


def roi_align_rotated_eager(
    input: Tensor,
    rois: Tensor,
    output_height: int,
    output_width: int,
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
    clockwise: bool,
) -> Tensor:
    """mmcv's roi_align_rotated in plain PyTorch, in the dtype of `input`, vectorised over the
    RoIs that share a sampling grid size. Its float32 operations are mmcv's kernel's; only the
    order in which a bin's samples are summed differs."""
    n, c, height, width = input.shape
    dtype = input.dtype
    out = input.new_zeros((rois.shape[0], c, output_height, output_width))
    if rois.shape[0] == 0:
        return out
    rois = rois.to(dtype)
    offset = 0.5 if aligned else 0.0
    center_w = rois[:, 1] * spatial_scale - offset
    center_h = rois[:, 2] * spatial_scale - offset
    roi_w = rois[:, 3] * spatial_scale
    roi_h = rois[:, 4] * spatial_scale
    theta = -rois[:, 5] if clockwise else rois[:, 5]
    if not aligned:  # legacy behaviour: force malformed RoIs to be 1x1
        roi_w, roi_h = roi_w.clamp(min=1.0), roi_h.clamp(min=1.0)
    finite = (torch.isfinite(center_w) & torch.isfinite(center_h) & torch.isfinite(roi_w) & torch.isfinite(roi_h)
              & torch.isfinite(theta))
    out[~finite] = float("nan")
    if sampling_ratio > 0:
        grid_h = torch.full_like(roi_h, sampling_ratio, dtype=torch.int64)
        grid_w = grid_h
    else:
        grid_h = torch.where(finite, torch.ceil(roi_h / output_height), 0).clamp(min=0).to(torch.int64)
        grid_w = torch.where(finite, torch.ceil(roi_w / output_width), 0).clamp(min=0).to(torch.int64)
    pairs = torch.stack([grid_h, grid_w], 1)
    for gh, gw in torch.unique(pairs[finite], dim=0).tolist():
        if gh == 0 or gw == 0:
            continue  # no samples: the bins are 0
        rows = torch.nonzero(finite & (grid_h == gh) & (grid_w == gw)).flatten()
        out[rows] = _pool_rois(input, rois[rows, 0].long(), center_h[rows], center_w[rows], roi_h[rows], roi_w[rows],
                               theta[rows], output_height, output_width, gh, gw, height, width)
    return out


def _pool_rois(input, batch, center_h, center_w, roi_h, roi_w, theta, out_h, out_w, grid_h, grid_w, height, width):
    """Pools RoIs that share a grid_h x grid_w sampling grid: [R, C, out_h, out_w]."""
    dtype, device = input.dtype, input.device
    bin_h, bin_w = roi_h / out_h, roi_w / out_w  # [R]
    # Sample coordinates in the box frame, as mmcv: start + p * bin + (i + 0.5) * bin / grid.
    ph = torch.arange(out_h, dtype=dtype, device=device)[None, :, None]
    iy = torch.arange(grid_h, dtype=dtype, device=device)[None, None, :]
    yy = (-roi_h / 2)[:, None, None] + ph * bin_h[:, None, None] + (iy + 0.5) * bin_h[:, None, None] / grid_h
    pw = torch.arange(out_w, dtype=dtype, device=device)[None, :, None]
    ix = torch.arange(grid_w, dtype=dtype, device=device)[None, None, :]
    xx = (-roi_w / 2)[:, None, None] + pw * bin_w[:, None, None] + (ix + 0.5) * bin_w[:, None, None] / grid_w
    yy = yy.reshape(len(batch), -1, 1)  # [R, out_h * grid_h, 1]
    xx = xx.reshape(len(batch), 1, -1)  # [R, 1, out_w * grid_w]
    cos, sin = torch.cos(theta)[:, None, None], torch.sin(theta)[:, None, None]
    y = yy * cos - xx * sin + center_h[:, None, None]
    x = yy * sin + xx * cos + center_w[:, None, None]
    if height == 0 or width == 0:
        return input.new_zeros((len(batch), input.shape[1], out_h, out_w))
    inside = (y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    y_low, x_low = y.floor().long(), x.floor().long()
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low, x_low = y_low.clamp(max=height - 1), x_low.clamp(max=width - 1)
    y_high = torch.where(y_edge, y_low, y_low + 1)
    x_high = torch.where(x_edge, x_low, x_low + 1)
    y = torch.where(y_edge, y_low.to(dtype), y)
    x = torch.where(x_edge, x_low.to(dtype), x)
    ly, lx = y - y_low.to(dtype), x - x_low.to(dtype)
    hy, hx = 1 - ly, 1 - lx
    pixels = input.flatten(2).transpose(1, 2)  # [N, H * W, C], a view

    def gather(yi, xi):  # the C values at (yi, xi) of each roi's image: [R, C, *yi.shape[1:]]
        index = (yi * width + xi).flatten(1)  # [R, S]
        return pixels[batch[:, None], index].transpose(1, 2).reshape(len(batch), -1, *yi.shape[1:])

    value = (hy * hx)[:, None] * gather(y_low, x_low) + (hy * lx)[:, None] * gather(y_low, x_high) \
        + (ly * hx)[:, None] * gather(y_high, x_low) + (ly * lx)[:, None] * gather(y_high, x_high)
    value = torch.where(inside[:, None], value, 0.0)
    value = value.reshape(len(batch), input.shape[1], out_h, grid_h, out_w, grid_w)
    return value.sum(dim=(3, 5)) / max(grid_h * grid_w, 1)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::RoiAlignRotated", torch.ops.opbridge.roi_align_rotated.default,
               sizes=pooled_output("input"))

EXPORT = ExportMapping(kernel="roi_align_rotated", dynamo=NODE.dynamo, legacy=NODE.legacy)
