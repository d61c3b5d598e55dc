"""Multi-scale deformable attention: a PyTorch op, the Deformable DETR layer, and the ONNX export
mappings.

``opbridge.ops.multi_scale_deformable_attention`` computes what mmcv's pure-PyTorch formulation
(``multi_scale_deformable_attn_pytorch``) computes: per level, ``F.grid_sample`` of the level's
value maps (bilinear, zeros padding, align_corners=False) at ``2 * locations - 1``, then the sum
of the samples times the attention weights. It exports to ``opbridge::MultiScaleDeformableAttention``
with both exporters (``compat="mmdeploy"``: ``mmdeploy::MMCVMultiScaleDeformableAttention``, the
node mmdeploy's symbolic writes, with its ``im2col_step``). ``MultiScaleDeformableAttention`` is the
Deformable DETR layer around it (see docs/ops/multi_scale_deformable_attention.md).
"""

from __future__ import annotations

from typing import TypeVar, Union

import torch
import torch.nn.functional as F
from onnxscript import FLOAT, INT32, INT64
from torch import Tensor, nn

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper


def multi_scale_deformable_attention(
    value: Tensor,
    spatial_shapes: Tensor,
    level_start_index: Tensor,
    sampling_locations: Tensor,
    attention_weights: Tensor,
) -> Tensor:
    """Multi-scale deformable attention, as mmcv's ``multi_scale_deformable_attn_pytorch``.

    Args:
        value: [N, S, M, D] float32: every level's pixels (row-major per level, levels in order)
            of M heads of D channels.
        spatial_shapes: [L, 2] int64 or int32: (H, W) of each level; the H * W sum to S.
        level_start_index: [L] int64 or int32: each level's first row of value.
        sampling_locations: [N, Lq, M, L, P, 2] float32: (x, y) of each point, normalized to
            [0, 1] over the level's map.
        attention_weights: [N, Lq, M, L, P] float32.

    Returns:
        [N, Lq, M * D]
    """
    return torch.ops.opbridge.multi_scale_deformable_attention(
        value, spatial_shapes, level_start_index, sampling_locations, attention_weights)


def multi_scale_deformable_attention_pytorch(
    value: Tensor, spatial_shapes: list[tuple[int, int]], sampling_locations: Tensor, attention_weights: Tensor
) -> Tensor:
    """The pure-PyTorch formulation with the level shapes as Python ints: what Deformable DETR
    runs on the CPU, and what torch.onnx exports with standard ops (one GridSample per level)."""
    n, _, heads, channels = value.shape
    _, queries, _, levels, points, _ = sampling_locations.shape
    value_levels = value.split([h * w for h, w in spatial_shapes], dim=1)
    grids = 2 * sampling_locations - 1
    samples = []
    for level, (h, w) in enumerate(spatial_shapes):
        # [N, H*W, M, D] -> [N*M, D, H, W]; grid [N, Lq, M, P, 2] -> [N*M, Lq, P, 2]
        value_l = value_levels[level].flatten(2).transpose(1, 2).reshape(n * heads, channels, h, w)
        grid_l = grids[:, :, :, level].transpose(1, 2).flatten(0, 1)
        samples.append(F.grid_sample(value_l, grid_l, mode="bilinear", padding_mode="zeros", align_corners=False))
    weights = attention_weights.transpose(1, 2).reshape(n * heads, 1, queries, levels * points)
    out = (torch.stack(samples, dim=-2).flatten(-2) * weights).sum(-1).view(n, heads * channels, queries)
    return out.transpose(1, 2).contiguous()


def _check(value: Tensor, spatial_shapes: Tensor, level_start_index: Tensor, sampling_locations: Tensor,
           attention_weights: Tensor) -> list[tuple[int, int]]:
    """The rules the ONNX op checks, with the same messages; returns the level shapes."""
    name = "multi_scale_deformable_attention"
    if value.dim() != 4:
        raise ValueError(f"{name}: value must have rank 4 [N, S, M, D], got shape {list(value.shape)}")
    for tensor, what in ((spatial_shapes, "spatial_shapes"), (level_start_index, "level_start_index")):
        if tensor.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"{name}: {what} must be int32 or int64, got {tensor.dtype}")
    if spatial_shapes.dim() != 2 or spatial_shapes.shape[1] != 2 or spatial_shapes.shape[0] < 1:
        raise ValueError(f"{name}: spatial_shapes must have shape [L, 2] with L >= 1, got {list(spatial_shapes.shape)}")
    levels = spatial_shapes.shape[0]
    if list(level_start_index.shape) != [levels]:
        raise ValueError(f"{name}: level_start_index must have shape [{levels}], got {list(level_start_index.shape)}")
    n, s, heads, _ = value.shape
    if sampling_locations.dim() != 6 or sampling_locations.shape[5] != 2 or \
            [sampling_locations.shape[i] for i in (0, 2, 3)] != [n, heads, levels]:
        raise ValueError(f"{name}: sampling_locations must have shape [N, Lq, M, L, P, 2] with N = {n}, M = {heads}, "
                         f"L = {levels}, got {list(sampling_locations.shape)}")
    if list(attention_weights.shape) != list(sampling_locations.shape[:5]):
        raise ValueError(f"{name}: attention_weights must have shape {list(sampling_locations.shape[:5])}, "
                         f"got {list(attention_weights.shape)}")
    shapes = [(int(h), int(w)) for h, w in spatial_shapes.tolist()]
    start = 0
    for level, ((h, w), first) in enumerate(zip(shapes, level_start_index.tolist())):
        if h < 1 or w < 1:
            raise ValueError(f"{name}: spatial_shapes[{level}] = ({h}, {w}) must hold a height and width >= 1")
        if first != start:
            raise ValueError(f"{name}: level_start_index[{level}] must be {start}, got {first}")
        start += h * w
    if start != s:
        raise ValueError(f"{name}: spatial_shapes must sum to S = {s} over the levels (sum of H * W), got {start}")
    return shapes


@torch.library.custom_op("opbridge::multi_scale_deformable_attention", mutates_args=())
def _msda_op(value: Tensor, spatial_shapes: Tensor, level_start_index: Tensor, sampling_locations: Tensor,
             attention_weights: Tensor) -> Tensor:
    shapes = _check(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)
    return multi_scale_deformable_attention_pytorch(value, shapes, sampling_locations, attention_weights)


@_msda_op.register_fake
def _(value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    return value.new_empty((value.shape[0], sampling_locations.shape[1], value.shape[2] * value.shape[3]))


class MultiScaleDeformableAttention(nn.Module):
    """The Deformable DETR attention layer (mmcv's ``MultiScaleDeformableAttention`` without
    dropout, identity connection and query position), with PyTorch's default random weights.

    forward(query [N, Lq, C], value [N, S, C], reference_points [N, Lq, L, 2] (x, y in [0, 1]),
    spatial_shapes [L, 2], level_start_index [L]) -> [N, Lq, C]: the value projection split into
    heads, sampling offsets (in pixels of each level) added to the reference points, attention
    weights with a softmax over L * P, the op, then the output projection.
    """

    def __init__(self, embed_dims: int = 256, num_heads: int = 8, num_levels: int = 4, num_points: int = 4):
        super().__init__()
        if embed_dims % num_heads:
            raise ValueError(f"embed_dims ({embed_dims}) must be divisible by num_heads ({num_heads})")
        self.embed_dims, self.num_heads, self.num_levels, self.num_points = embed_dims, num_heads, num_levels, num_points
        self.sampling_offsets = nn.Linear(embed_dims, num_heads * num_levels * num_points * 2)
        self.attention_weights = nn.Linear(embed_dims, num_heads * num_levels * num_points)
        self.value_proj = nn.Linear(embed_dims, embed_dims)
        self.output_proj = nn.Linear(embed_dims, embed_dims)

    def forward(self, query: Tensor, value: Tensor, reference_points: Tensor, spatial_shapes: Tensor,
                level_start_index: Tensor) -> Tensor:
        n, queries, _ = query.shape
        heads, levels, points = self.num_heads, self.num_levels, self.num_points
        value = self.value_proj(value).view(n, value.shape[1], heads, self.embed_dims // heads)
        offsets = self.sampling_offsets(query).view(n, queries, heads, levels, points, 2)
        weights = self.attention_weights(query).view(n, queries, heads, levels * points).softmax(-1)
        weights = weights.view(n, queries, heads, levels, points)
        # Offsets are in pixels of each level: divide by (W, H).
        normalizer = torch.stack([spatial_shapes[..., 1], spatial_shapes[..., 0]], -1).to(offsets.dtype)
        locations = reference_points[:, :, None, :, None, :] + offsets / normalizer[None, None, None, :, None, :]
        out = multi_scale_deformable_attention(value, spatial_shapes, level_start_index, locations, weights)
        return self.output_proj(out)


# --- export mappings ----------------------------------------------------------------------------

# Each index input is int32 or int64, on its own.
TShapes = TypeVar("TShapes", bound=Union[INT32, INT64])
TStarts = TypeVar("TStarts", bound=Union[INT32, INT64])


@onnxscript.script(WRAPPERS)
def _msda_onnx(value: FLOAT, spatial_shapes: TShapes, level_start_index: TStarts, sampling_locations: FLOAT,
               attention_weights: FLOAT) -> FLOAT:
    return OPBRIDGE.MultiScaleDeformableAttention(
        value, spatial_shapes, level_start_index, sampling_locations, attention_weights)


def _msda_symbolic(g, value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    out = g.op("opbridge::MultiScaleDeformableAttention", value, spatial_shapes, level_start_index,
               sampling_locations, attention_weights)
    size = symbolic_helper()._get_tensor_dim_size
    heads, channels = size(value, 2), size(value, 3)
    row = heads * channels if heads is not None and channels is not None else None
    out.setType(value.type().with_sizes([size(value, 0), size(sampling_locations, 1), row]))
    return out


EXPORT = ExportMapping(
    kernel="multi_scale_deformable_attention",
    dynamo={torch.ops.opbridge.multi_scale_deformable_attention.default: _msda_onnx},
    legacy={"opbridge::multi_scale_deformable_attention": _msda_symbolic},
)
