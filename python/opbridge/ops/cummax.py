"""Cumulative maximum and minimum: ONNX export mappings for torch.cummax and torch.cummin.

ONNX has no such op. ``torch.cummax(x, dim)`` reaches both exporters as aten::cummax (dynamo:
``aten.cummax.default``), ``torch.cummin`` as aten::cummin; they export to ``opbridge::CumMax`` and
``opbridge::CumMin`` with the attribute ``dim`` and two outputs, values (the input's dtype) and
indices (int64), which is the node mmcv's ``register_extra_symbolics`` writes as ``mmcv::cummax`` /
``mmcv::cummin`` (``compat="mmcv"``). The kernel computes what torch computes, bit for bit.
"""

from __future__ import annotations

from typing import TypeVar, Union

import torch
from onnxscript import DOUBLE, FLOAT, INT32, INT64

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper

# The dtypes the nodes take (the manifest's type parameter T).
TScanned = TypeVar("TScanned", bound=Union[FLOAT, DOUBLE, INT32, INT64])


@onnxscript.script(WRAPPERS)
def _cummax_onnx(self: TScanned, dim: int) -> tuple[TScanned, INT64]:  # the exporter counts outputs from this
    values, indices = OPBRIDGE.CumMax(self, dim=dim)
    return values, indices


@onnxscript.script(WRAPPERS)
def _cummin_onnx(self: TScanned, dim: int) -> tuple[TScanned, INT64]:
    values, indices = OPBRIDGE.CumMin(self, dim=dim)
    return values, indices


def _symbolic(op_type: str):
    def symbolic(g, input, dim):
        values, indices = g.op(f"opbridge::{op_type}", input, dim_i=symbolic_helper()._parse_arg(dim, "i"), outputs=2)
        values.setType(input.type())
        indices.setType(input.type().with_dtype(torch.int64))
        return values, indices

    return symbolic


EXPORT = ExportMapping(
    kernel="cummax",
    dynamo={torch.ops.aten.cummax.default: _cummax_onnx, torch.ops.aten.cummin.default: _cummin_onnx},
    legacy={"aten::cummax": _symbolic("CumMax"), "aten::cummin": _symbolic("CumMin")},
)
