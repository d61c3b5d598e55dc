"""ONNX-side pieces every op's export mapping uses.

Dynamo translations are @onnxscript.script functions (custom-domain ops need scripted functions,
and those need real source files, so every op keeps its translations in its own module). They
live in the wrapper domain "opbridge.export", which the exporter inlines away, and emit the
primitive node in the "opbridge" domain. Legacy (TorchScript) symbolics emit the same node with
the same attribute names.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import onnxscript
import torch

DOMAIN = "opbridge"
OPSET_VERSION = 1
OPBRIDGE = onnxscript.values.Opset(DOMAIN, OPSET_VERSION)
WRAPPERS = onnxscript.values.Opset("opbridge.export", 1)

# The half dtypes whose values the ops' eager implementations compute on in float32, as the kernels
# do (and as PyTorch's autocast runs torchvision's ops), rounding each result once.
HALF_DTYPES = (torch.float16, torch.bfloat16)


def float32_of_half(*tensors):
    """`tensors` with the half ones as float32 (exact), and the dtype to round the results to (None
    where no input is half)."""
    half = next((t.dtype for t in tensors if t.dtype in HALF_DTYPES), None)
    return tuple(t.float() if t.dtype in HALF_DTYPES else t for t in tensors), half


@dataclasses.dataclass(frozen=True)
class FunctionPatch:
    """A Python function that cannot be exported as it is (it branches on data-dependent sizes,
    say) and the export-friendly function that stands in for it during opbridge.export. The
    replacement must compute the same results."""

    original: Callable
    replacement: Callable


@dataclasses.dataclass(frozen=True)
class AttributePatch:
    """Replaces the attribute `name` of `owner` (a method of a class, say) during opbridge.export.
    The replacement must compute the same results."""

    owner: object
    name: str
    replacement: Callable


@dataclasses.dataclass(frozen=True)
class ExportMapping:
    """How one op reaches ONNX: translations for the dynamo exporter (keyed by torch op overload),
    symbolics for the legacy exporter (keyed by "namespace::op" name), dynamo translations to
    standard ONNX ops (or ORT's own) for export with standard_ops (replacing entries of `dynamo`;
    ops absent here keep torch's own translation), legacy symbolics for standard_ops (replacing
    entries of `legacy`; an op without them has standard_ops for the dynamo exporter only), and
    Python functions patched during export.

    peers_export_standard: mmcv and mmdeploy export this op with PyTorch's standard ONNX
    translation for ONNX Runtime, so an export with compat="mmcv" / "mmdeploy" does too (with
    either exporter) rather than writing opbridge's node.

    standard_exporters: the exporters with which export(standard_ops=...) may name this kernel:
    those for which `standard` / `legacy_standard` or PyTorch's own translation writes a graph
    without opbridge's node (tested). Empty: the op has no standard-ONNX form (cummax, say)."""

    kernel: str
    dynamo: dict = dataclasses.field(default_factory=dict)
    legacy: dict[str, Callable] = dataclasses.field(default_factory=dict)
    standard: dict = dataclasses.field(default_factory=dict)
    legacy_standard: dict[str, Callable] = dataclasses.field(default_factory=dict)
    patches: tuple[FunctionPatch | AttributePatch, ...] = ()
    peers_export_standard: bool = False
    standard_exporters: tuple[str, ...] = ()


def symbolic_helper():
    """torch's legacy-exporter helper module (moved in torch 2.9; the old path is a shim)."""
    try:
        from torch.onnx._internal.torchscript_exporter import symbolic_helper as helper
    except ImportError:  # pragma: no cover - older torch
        from torch.onnx import symbolic_helper as helper
    return helper
