"""Rotated feature align: a PyTorch op (torch has none) and its ONNX export mapping.

``opbridge.ops.rotated_feature_align(features, best_rbboxes, spatial_scale=1/8, points=1)`` is
mmcv's ``rotated_feature_align`` (R3Det's feature refinement): every pixel (n, h, w) of features
[N, C, H, W] adds to its own value the bilinear samples of its channel plane at the points of its
box best_rbboxes[n, h, w] = (y, x, w, h, angle in radians): the centre, and with points = 5 also
the 4 corners of the rotated box. It computes in float32 what mmcv's CPU kernel computes, in the
same order (see docs/ops/rotated_feature_align.md).

It exports to ``opbridge::RotatedFeatureAlign`` with both exporters (``compat="mmcv"``:
``mmcv::MMCVRotatedFeatureAlign``, the node mmcv's exporter writes), with both attributes written.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from opbridge import manifest
from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode


def rotated_feature_align(features: Tensor, best_rbboxes: Tensor, spatial_scale: float = 1 / 8,
                          points: int = 1) -> Tensor:
    """mmcv's rotated_feature_align: features [N, C, H, W], best_rbboxes [N, H, W, 5] holding
    (y, x, w, h, angle in radians) per pixel -> [N, C, H, W]. Defaults are mmcv's.

    Args:
        features: float32 feature map.
        best_rbboxes: the refined box of every pixel, in image coordinates (y and x first, as
            mmcv's kernel reads them).
        spatial_scale: multiplies y, x, w and h to reach feature coordinates; finite and > 0.
        points: 1 (the box centre) or 5 (the centre and the 4 corners).
    """
    return torch.ops.opbridge.rotated_feature_align(features, best_rbboxes, float(spatial_scale), int(points))


def _check(features: Tensor, best_rbboxes: Tensor, spatial_scale: float, points: int) -> None:
    if features.dim() != 4 or tuple(best_rbboxes.shape) != (features.shape[0], features.shape[2],
                                                            features.shape[3], 5):
        raise ValueError(f"rotated_feature_align: features must be [N, C, H, W] and best_rbboxes [N, H, W, 5], "
                         f"got {list(features.shape)} and {list(best_rbboxes.shape)}")
    if features.dtype != torch.float32 or best_rbboxes.dtype != torch.float32:
        raise ValueError(f"rotated_feature_align: features and best_rbboxes must be float32, got {features.dtype} "
                         f"and {best_rbboxes.dtype}")
    if not (math.isfinite(spatial_scale) and spatial_scale > 0):
        raise ValueError(f"rotated_feature_align: spatial_scale must be a finite number > 0, got {spatial_scale}")
    manifest.load()["rotated_feature_align"].attribute("points").check(points, "rotated_feature_align")


def _sample_points(best_rbboxes: Tensor, spatial_scale: float, points: int) -> tuple[list[Tensor], list[Tensor]]:
    """The (y, x) of every point of every pixel's box, [N, H, W] each, in mmcv's order and
    arithmetic: the centre, then c+w+h, c-w+h, c-w-h, c+w-h, where the w vector is
    (cos a, sin a) * w / 2 and the h vector (-sin a, cos a) * h / 2 in (x, y)."""
    scale = torch.tensor(spatial_scale, dtype=torch.float32, device=best_rbboxes.device)  # the node's float attribute, as the kernel sees it
    roi_y, roi_x = best_rbboxes[..., 0] * scale, best_rbboxes[..., 1] * scale
    if points == 1:
        return [roi_y], [roi_x]
    w_2 = best_rbboxes[..., 2] * scale / 2
    h_2 = best_rbboxes[..., 3] * scale / 2
    angle = best_rbboxes[..., 4].double()
    # cos and sin rounded from float64, as the kernel computes them (see its notes on mmcv's cosf).
    cosa, sina = torch.cos(angle).float(), torch.sin(angle).float()
    wx, wy = cosa * w_2, sina * w_2
    hx, hy = -sina * h_2, cosa * h_2
    ys = [roi_y, roi_y + wy + hy, roi_y - wy + hy, roi_y - wy - hy, roi_y + wy - hy]
    xs = [roi_x, roi_x + wx + hx, roi_x - wx + hx, roi_x - wx - hx, roi_x + wx - hx]
    return ys, xs


def _bilinear(planes: Tensor, y: Tensor, x: Tensor, height: int, width: int) -> Tensor:
    """mmcv's bilinear_interpolate of every plane [N, C, H * W] at one point per pixel (y and x
    [N, H, W]) -> [N, C, H * W]: 0 outside [-1, H] x [-1, W] (tested first), NaN for a NaN
    coordinate otherwise, else coordinates <= 0 become 0 and the neighbours are clamped to the
    last row and column; w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4 in that order."""
    n = planes.shape[0]
    outside = (y < -1) | (y > height) | (x < -1) | (x > width)
    undefined = ~outside & (y.isnan() | x.isnan())
    usable = ~(outside | undefined)
    y = torch.where(usable & (y > 0), y, 0.0)
    x = torch.where(usable & (x > 0), x, 0.0)
    y_low, x_low = y.long(), x.long()  # truncation: y, x >= 0 here
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = torch.where(y_edge, height - 1, y_low)
    x_low = torch.where(x_edge, width - 1, x_low)
    y_high = torch.where(y_edge, y_low, y_low + 1)
    x_high = torch.where(x_edge, x_low, x_low + 1)
    y = torch.where(y_edge, y_low.to(y.dtype), y)
    x = torch.where(x_edge, x_low.to(x.dtype), x)
    ly, lx = y - y_low.to(y.dtype), x - x_low.to(x.dtype)
    hy, hx = 1 - ly, 1 - lx

    def gather(rows: Tensor, cols: Tensor) -> Tensor:
        index = (rows * width + cols).reshape(n, 1, -1).expand(-1, planes.shape[1], -1)
        return torch.gather(planes, 2, index)

    def per_pixel(weight: Tensor) -> Tensor:
        return weight.reshape(n, 1, -1)

    value = (per_pixel(hy * hx) * gather(y_low, x_low) + per_pixel(hy * lx) * gather(y_low, x_high)
             + per_pixel(ly * hx) * gather(y_high, x_low) + per_pixel(ly * lx) * gather(y_high, x_high))
    value = torch.where(per_pixel(outside), 0.0, value)
    return torch.where(per_pixel(undefined), math.nan, value)


@torch.library.custom_op("opbridge::rotated_feature_align", mutates_args=())
def _rotated_feature_align_op(features: Tensor, best_rbboxes: Tensor, spatial_scale: float, points: int) -> Tensor:
    _check(features, best_rbboxes, spatial_scale, points)
    n, c, height, width = features.shape
    if features.numel() == 0:
        return features.clone()
    planes = features.reshape(n, c, height * width)
    out = planes.clone()
    for y, x in zip(*_sample_points(best_rbboxes, spatial_scale, points)):
        out = out + _bilinear(planes, y, x, height, width)  # in + sample_0 + sample_1 + ..., in order
    return out.reshape(n, c, height, width)


@_rotated_feature_align_op.register_fake
def _(features, best_rbboxes, spatial_scale, points):
    return features.new_empty(features.shape)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::RotatedFeatureAlign", torch.ops.opbridge.rotated_feature_align.default)

EXPORT = ExportMapping(kernel="rotated_feature_align", dynamo=NODE.dynamo, legacy=NODE.legacy)
