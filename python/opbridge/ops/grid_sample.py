"""Grid sampler: ONNX export mappings for torch.nn.functional.grid_sample (4-D and 5-D input).

F.grid_sample reaches both exporters as aten::grid_sampler with PyTorch's integer mode codes,
which are the codes the node carries (as mmcv and mmdeploy export them), on 4-D input
(grid_sampler_2d) and on 5-D input (grid_sampler_3d) alike: the node takes both.
"""

from __future__ import annotations

import torch
from onnxscript import FLOAT

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper

INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


@onnxscript.script(WRAPPERS)
def _grid_sampler_onnx(
    input: FLOAT, grid: FLOAT, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> FLOAT:
    return OPBRIDGE.GridSample(
        input, grid, interpolation_mode=interpolation_mode, padding_mode=padding_mode, align_corners=align_corners
    )


def _grid_sampler_symbolic(g, input, grid, interpolation_mode, padding_mode, align_corners):
    helper = symbolic_helper()
    args = helper._parse_arg
    out = g.op(
        "opbridge::GridSample", input, grid, interpolation_mode_i=args(interpolation_mode, "i"),
        padding_mode_i=args(padding_mode, "i"), align_corners_i=int(args(align_corners, "b")),
    )
    size = helper._get_tensor_dim_size
    rank = helper._get_tensor_rank(input) or helper._get_tensor_rank(grid)
    if rank in (4, 5):  # [N, C] and the grid's spatial sizes
        out.setType(input.type().with_sizes([size(input, 0), size(input, 1)] + [size(grid, k) for k in range(1, rank - 1)]))
    return out


EXPORT = ExportMapping(
    kernel="grid_sample",
    dynamo={torch.ops.aten.grid_sampler.default: _grid_sampler_onnx},
    legacy={"aten::grid_sampler": _grid_sampler_symbolic},
)
