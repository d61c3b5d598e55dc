"""Cumulative maximum and minimum: ONNX export mappings for torch.cummax and torch.cummin.

ONNX has no such op. ``torch.cummax(x, dim)`` reaches both exporters as aten::cummax (dynamo:
``aten.cummax.default``), ``torch.cummin`` as aten::cummin; they export to ``opbridge::CumMax`` and
``opbridge::CumMin`` with the attribute ``dim`` and two outputs, values (the input's dtype) and
indices (int64), which is the node mmcv's ``register_extra_symbolics`` writes as ``mmcv::cummax`` /
``mmcv::cummin`` (``compat="mmcv"``). The kernel computes what torch computes, bit for bit.
"""

from __future__ import annotations

import torch

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

CUMMAX_NODE = OneNode("opbridge::CumMax", torch.ops.aten.cummax.default, inputs={"input": "self"})
CUMMIN_NODE = OneNode("opbridge::CumMin", torch.ops.aten.cummin.default, inputs={"input": "self"})

EXPORT = ExportMapping(
    kernel="cummax",
    dynamo={**CUMMAX_NODE.dynamo, **CUMMIN_NODE.dynamo},
    legacy={**CUMMAX_NODE.legacy, **CUMMIN_NODE.legacy},
)
