"""Matrix inverse: ONNX export mappings for torch.inverse, torch.linalg.inv and torch.linalg.inv_ex.

What the exporters see (torch 2.14): the dynamo exporter keeps ``aten.inverse`` and
``aten.linalg_inv`` whole because this table has them (without them it decomposes both into
``aten.linalg_inv_ex`` plus an ``aten._linalg_check_errors`` side effect, which it cannot
translate); ``torch.linalg.inv_ex`` is ``aten.linalg_inv_ex`` (outputs inverse and info). The
legacy exporter sees ``aten::linalg_inv`` for both torch.inverse and torch.linalg.inv, traced or
scripted (``aten::inverse`` never reaches it), and ``aten::linalg_inv_ex``.

By default all of them become ``opbridge::Inverse``: torch.inverse and torch.linalg.inv with
``check_errors = 1`` (a singular matrix is an error, as in PyTorch), torch.linalg.inv_ex with its
own check_errors and the info output. ``standard_ops=("inverse",)`` writes ORT's
``com.microsoft::Inverse`` instead (float32, float64 and float16; a singular matrix gives inf or
NaN, no error, and it has no info output, so torch.linalg.inv_ex is refused there).
opbridge::Inverse is float32 only: other dtypes are refused at export with that advice.
"""

from __future__ import annotations

import onnxscript
import torch
from onnxscript import FLOAT

from opbridge.ops._onnx import WRAPPERS, ExportMapping
from opbridge.ops._one_node import OneNode

MICROSOFT = onnxscript.values.Opset("com.microsoft", 1)

FLOAT32_ONLY = ("opbridge::Inverse takes float32 matrices, got {dtype}; export with standard_ops=(\"inverse\",) "
                "for ORT's com.microsoft::Inverse, which takes float32, float64 and float16")
NO_INFO = ("torch.linalg.inv_ex has no com.microsoft::Inverse translation: that op has no info output and "
           "never reports a singular matrix; export without standard_ops=(\"inverse\",) (opbridge::Inverse "
           "computes info), or call torch.linalg.inv")


# dtype names as onnx_ir (dynamo) and TorchScript (legacy) spell them, to numpy's.
_DTYPE_NAMES = {"FLOAT": "float32", "Float": "float32", "DOUBLE": "float64", "Double": "float64",
                "FLOAT16": "float16", "Half": "float16", "BFLOAT16": "bfloat16", "BFloat16": "bfloat16"}


def _require_float32(dtype_name: str | None) -> None:
    """Refuses matrices opbridge::Inverse does not take, at export rather than in ORT."""
    name = _DTYPE_NAMES.get(dtype_name, dtype_name or "an unknown dtype")
    if name != "float32":
        raise TypeError(FLOAT32_ONLY.format(dtype=name))


def _inverse_and_info_sizes(shapes):
    """The inverse has A's sizes, info A's batch dims."""
    sizes = shapes.sizes("input")
    return [None, None if sizes is None else sizes[:-2]]


# torch.inverse and torch.linalg.inv: the inverse alone, a singular matrix an error.
INVERSE_NODE = OneNode("opbridge::Inverse", torch.ops.aten.linalg_inv.default, inputs={"input": "A"},
                       attributes={"check_errors": 1}, outputs=1)
# torch.linalg.inv_ex: the inverse and info, with the call's check_errors.
INVERSE_EX_NODE = OneNode("opbridge::Inverse", torch.ops.aten.linalg_inv_ex.default, inputs={"input": "A"},
                          sizes=_inverse_and_info_sizes)


# --- dynamo translations ------------------------------------------------------------------------


@onnxscript.script(WRAPPERS)
def _microsoft_inverse_onnx(A: FLOAT) -> FLOAT:  # the exporter passes float64 and float16 matrices too
    return MICROSOFT.Inverse(A)


def _inverse(A):
    """aten.inverse / aten.linalg_inv (A) -> opbridge::Inverse with check_errors = 1."""
    _require_float32(A.dtype.name if A.dtype is not None else None)
    return INVERSE_NODE.translation(A)


def _inverse_ex(A, check_errors: bool = False):
    """aten.linalg_inv_ex (A, check_errors) -> opbridge::Inverse with both outputs."""
    _require_float32(A.dtype.name if A.dtype is not None else None)
    return INVERSE_EX_NODE.translation(A, check_errors=check_errors)


def _refuse_inverse_ex(A, check_errors: bool = False):
    raise ValueError(NO_INFO)


# --- legacy symbolics ---------------------------------------------------------------------------


def _inverse_symbolic(g, A):
    _require_float32(A.type().scalarType())
    return INVERSE_NODE.symbolic(g, A)


def _inverse_ex_symbolic(g, A, check_errors):
    _require_float32(A.type().scalarType())
    return INVERSE_EX_NODE.symbolic(g, A, check_errors)


def _microsoft_inverse_symbolic(g, A):
    inverse = g.op("com.microsoft::Inverse", A)
    inverse.setType(A.type())
    return inverse


def _refuse_inverse_ex_symbolic(g, A, check_errors):
    raise ValueError(NO_INFO)


EXPORT = ExportMapping(
    kernel="inverse",
    dynamo={
        torch.ops.aten.inverse.default: _inverse,
        torch.ops.aten.linalg_inv.default: _inverse,
        torch.ops.aten.linalg_inv_ex.default: _inverse_ex,
    },
    legacy={
        "aten::linalg_inv": _inverse_symbolic,
        "aten::linalg_inv_ex": _inverse_ex_symbolic,
    },
    standard={
        torch.ops.aten.inverse.default: _microsoft_inverse_onnx,
        torch.ops.aten.linalg_inv.default: _microsoft_inverse_onnx,
        torch.ops.aten.linalg_inv_ex.default: _refuse_inverse_ex,
    },
    legacy_standard={
        "aten::linalg_inv": _microsoft_inverse_symbolic,
        "aten::linalg_inv_ex": _refuse_inverse_ex_symbolic,
    },
    standard_exporters=("dynamo", "legacy"),
)
