"""Exporting PyTorch models that use opbridge's ops to ONNX, with either torch exporter.

One op description (opbridge.ops.*.EXPORT) drives both exporters: the dynamo exporter gets a
custom translation table, the legacy (TorchScript) exporter gets symbolics registered only for
the duration of the call. Either way the model carries opbridge's nodes, not the standard ONNX
RoiAlign / GridSample, whose semantics differ from PyTorch's.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import warnings
from pathlib import Path

import onnx
import torch

from opbridge import manifest
from opbridge.ops import EXPORT_MAPPINGS
from opbridge.ops._onnx import DOMAIN, OPSET_VERSION

EXPORTERS = ("dynamo", "legacy")
LEGACY_OPSET = 17  # the legacy exporter's ceiling; our symbolics are registered at exactly it
DYNAMO_OPSET = 18
STANDARD_OPS_OPSET = 19  # ONNX DeformConv
COMPAT_DOMAINS = ("mmcv", "mmdeploy")


def export(
    model: torch.nn.Module,
    args: tuple,
    path: str | Path | None = None,
    *,
    exporter: str = "dynamo",
    dynamic_axes: dict[str, dict[int, str]] | None = None,
    output_names: list[str] | None = None,
    compat: str | None = None,
    standard_ops: tuple[str, ...] = (),
) -> onnx.ModelProto:
    """Exports `model(*args)` to ONNX with opbridge's custom nodes, and returns the model.

    Args:
        model: the module; it is exported as it is (call .eval() first for inference).
        args: example inputs, a tuple of tensors in forward()'s order.
        path: where to write the .onnx file (one file; weights are embedded). None: don't write.
        exporter: "dynamo" (torch.export based, PyTorch's default) or "legacy" (TorchScript).
        dynamic_axes: dims that may change, by forward() parameter name, e.g.
            {"rois": {0: "num_rois"}}. The same description serves both exporters.
        output_names: names of the graph outputs.
        compat: None for opbridge's own identities, or "mmcv" / "mmdeploy" to write the identities
            those projects export (for tools that expect their ONNX files).
        standard_ops: ops (kernel stems, e.g. ("deform_conv",)) to export as PyTorch's exporter
            does by default, to standard ONNX ops, for runtimes that have them: "deform_conv" gives
            ONNX DeformConv (opset 19), "nms" ONNX NonMaxSuppression. Dynamo exporter only.
    """
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter must be one of {EXPORTERS}, got {exporter!r}")
    if compat is not None and compat not in COMPAT_DOMAINS:
        raise ValueError(f"compat must be None or one of {COMPAT_DOMAINS}, got {compat!r}")
    known = {m.kernel for m in EXPORT_MAPPINGS}
    if set(standard_ops) - known:
        raise ValueError(f"standard_ops must be kernel names of {sorted(known)}, got {list(standard_ops)}")
    if standard_ops and exporter != "dynamo":
        raise ValueError("standard_ops needs exporter='dynamo' (the legacy exporter has no such translations)")
    args = tuple(args)
    input_names = _input_names(model, len(args))
    if dynamic_axes:
        unknown = set(dynamic_axes) - set(input_names)
        if unknown:
            raise ValueError(f"dynamic_axes names {sorted(unknown)} are not forward() parameters {input_names}")
    with _patched_functions():
        if exporter == "dynamo":
            proto = _export_dynamo(model, args, input_names, dynamic_axes, output_names, standard_ops)
        else:
            proto = _export_legacy(model, args, input_names, dynamic_axes, output_names)
    if compat is not None:
        rename_domain(proto, compat)
    if path is not None:
        onnx.save(proto, str(path))
    return proto


def custom_nodes(model: onnx.ModelProto) -> list[str]:
    """The "domain::op_type" of every node outside the standard ONNX domains, in graph order."""
    return [f"{n.domain}::{n.op_type}" for n in model.graph.node if n.domain not in ("", "ai.onnx")]


def rename_domain(model: onnx.ModelProto, domain: str) -> None:
    """Rewrites opbridge nodes to the identities `domain` ("mmcv" or "mmdeploy") uses for them.

    A node is renamed to the op's identity in `domain` that has the same inputs, outputs and
    attributes, so only domain and op_type change; a node without one is an error.
    """
    for node in model.graph.node:
        if node.domain != DOMAIN:
            continue
        identity = f"{node.domain}::{node.op_type}"
        op = manifest.find(identity)
        target = op.identity_in(domain, like=identity)
        if target is None:
            others = [i for i in op.identities if i.startswith(domain + "::")]
            raise ValueError(
                f"{identity} has no {domain} identity with the same inputs, outputs and attributes"
                + (f" ({domain} has {', '.join(others)}, which differ)" if others else f" ({domain} has none)")
                + "; export it with compat=None")
        node.domain, node.op_type = target.split("::")
    imports = [o for o in model.opset_import if o.domain not in (DOMAIN, domain)]
    del model.opset_import[:]
    model.opset_import.extend(imports + [onnx.helper.make_opsetid(domain, 1)])


def _input_names(model: torch.nn.Module, count: int) -> list[str]:
    params = list(inspect.signature(model.forward).parameters.values())
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < count:
        raise ValueError(f"forward() takes {len(names)} positional inputs, {count} were given")
    return names[:count]


@contextlib.contextmanager
def _patched_functions():
    """Replaces, for the duration of the block, every reference to a patched function that a
    loaded module holds (torchvision.ops.boxes.batched_nms, and the same function imported into
    torchvision.ops or a user's module), and puts the originals back afterwards."""
    patches = [p for mapping in EXPORT_MAPPINGS for p in mapping.patches]
    replaced = []
    try:
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                for patch in patches:
                    if value is patch.original:
                        namespace[name] = patch.replacement
                        replaced.append((namespace, name, value))
        yield
    finally:
        for namespace, name, value in replaced:
            namespace[name] = value


def _export_dynamo(model, args, input_names, dynamic_axes, output_names, standard_ops=()) -> onnx.ModelProto:
    table = {}
    for mapping in EXPORT_MAPPINGS:
        # A standard kernel's ops keep torch's own translations, except those in `standard`.
        table.update(mapping.standard if mapping.kernel in standard_ops else mapping.dynamo)
    dynamic_shapes = None
    if dynamic_axes:
        dynamic_shapes = {name: dynamic_axes.get(name) for name in input_names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            model, args, dynamo=True, custom_translation_table=table, dynamic_shapes=dynamic_shapes,
            input_names=input_names, output_names=output_names,
            opset_version=STANDARD_OPS_OPSET if standard_ops else DYNAMO_OPSET,
            external_data=False, verbose=False, report=False,
        )
    return program.model_proto


@contextlib.contextmanager
def _legacy_symbolics(opset: int):
    """Registers our symbolics at exactly `opset` for the duration of the block.

    At exactly the export opset they win over torchvision's (opsets 11 and 16) and torch's
    built-ins, and unregistering afterwards brings those back untouched.
    """
    names = []
    try:
        for mapping in EXPORT_MAPPINGS:
            for name, fn in mapping.legacy.items():
                torch.onnx.register_custom_op_symbolic(name, fn, opset)
                names.append(name)
        yield
    finally:
        for name in names:
            torch.onnx.unregister_custom_op_symbolic(name, opset)


def _export_legacy(model, args, input_names, dynamic_axes, output_names) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), _legacy_symbolics(LEGACY_OPSET):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, args, buffer, dynamo=False, opset_version=LEGACY_OPSET, input_names=input_names,
            output_names=output_names, dynamic_axes=dynamic_axes, custom_opsets={DOMAIN: OPSET_VERSION},
        )
    return onnx.load_from_string(buffer.getvalue())
