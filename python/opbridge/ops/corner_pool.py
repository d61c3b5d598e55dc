"""Corner pooling: a PyTorch op (torch has none) and its ONNX export mapping.

``opbridge.ops.corner_pool(input, mode)`` is mmcv's ``CornerPool`` (CornerNet) as its forward
computes it with PyTorch >= 1.5: ``torch.cummax`` along H (top, bottom) or W (left, right) of the
input, flipped along that axis for top and left and flipped back. It exports to
``opbridge::CornerPool`` with both exporters (``compat="mmcv"``: ``mmcv::MMCVCornerPool``, the
node mmcv's ``Top/Bottom/Left/RightPoolFunction`` write), whose kernel computes the same values,
bit for bit (see docs/ops/corner_pool.md).
"""

from __future__ import annotations

import torch
from torch import Tensor

from opbridge import manifest
from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

# mmcv's mode codes, and the axis each mode scans and whether it scans from the far end.
MODES = {"top": 0, "bottom": 1, "left": 2, "right": 3}
_SCANS = {0: (2, True), 1: (2, False), 2: (3, True), 3: (3, False)}


def corner_pool(input: Tensor, mode: str | int) -> Tensor:
    """mmcv's corner pooling of input [N, C, H, W] (float32) -> [N, C, H, W].

    Args:
        input: the feature map.
        mode: "top" (0): out[h] = max(input[h..H-1]) along H; "bottom" (1): max(input[0..h]);
            "left" (2): out[w] = max(input[w..W-1]) along W; "right" (3): max(input[0..w]).
            The maximum is torch.cummax's: NaN propagates.
    """
    if isinstance(mode, str):
        if mode not in MODES:
            raise ValueError(f"corner_pool: mode must be one of {list(MODES)} or 0-3, got {mode!r}")
        mode = MODES[mode]
    return torch.ops.opbridge.corner_pool(input, int(mode))


def _check(input: Tensor, mode: int) -> None:
    if input.dim() != 4:
        raise ValueError(f"corner_pool: input must be [N, C, H, W], got shape {list(input.shape)}")
    if input.dtype != torch.float32:
        raise ValueError(f"corner_pool: input must be float32, got {input.dtype}")
    manifest.load()["corner_pool"].attribute("mode").check(mode, "corner_pool")


@torch.library.custom_op("opbridge::corner_pool", mutates_args=())
def _corner_pool_op(input: Tensor, mode: int) -> Tensor:
    _check(input, mode)
    dim, flip = _SCANS[mode]
    if flip:
        input = input.flip(dim)
    pooled = torch.cummax(input, dim)[0]
    return pooled.flip(dim) if flip else pooled


@_corner_pool_op.register_fake
def _(input, mode):
    return input.new_empty(input.shape)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::CornerPool", torch.ops.opbridge.corner_pool.default)

EXPORT = ExportMapping(kernel="corner_pool", dynamo=NODE.dynamo, legacy=NODE.legacy)
