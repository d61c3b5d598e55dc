"""Grid sampler: ONNX export mappings for torch.nn.functional.grid_sample (4-D and 5-D input).

F.grid_sample reaches both exporters as aten::grid_sampler with PyTorch's integer mode codes,
which are the codes the node carries (as mmcv and mmdeploy export them), on 4-D input
(grid_sampler_2d) and on 5-D input (grid_sampler_3d) alike: the node takes both.
"""

from __future__ import annotations

import torch

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _sizes(shapes):
    """[N, C] and the grid's spatial sizes; nothing declared where the rank is unknown."""
    rank = shapes.rank("input") or shapes.rank("grid")
    if rank not in (4, 5):
        return None
    return [[shapes.dim("input", 0), shapes.dim("input", 1)] + [shapes.dim("grid", k) for k in range(1, rank - 1)]]


NODE = OneNode("opbridge::GridSample", torch.ops.aten.grid_sampler.default, sizes=_sizes)

EXPORT = ExportMapping(kernel="grid_sample", dynamo=NODE.dynamo, legacy=NODE.legacy)
