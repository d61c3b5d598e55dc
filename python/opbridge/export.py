"""Exporting PyTorch models that use opbridge's ops to ONNX, with either torch exporter.

One op description (opbridge.ops.*.EXPORT) drives both exporters: the dynamo exporter gets a
custom translation table, the legacy (TorchScript) exporter gets symbolics registered only for
the duration of the call. Either way the model carries opbridge's nodes, not the standard ONNX
RoiAlign / GridSample, whose semantics differ from PyTorch's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io
import sys
import warnings
from pathlib import Path

import onnx
import torch
import torch.utils._pytree as pytree

from opbridge import detection, manifest
from opbridge.check import is_custom_node
from opbridge.ops import EXPORT_MAPPINGS
from opbridge.ops._onnx import DOMAIN, OPSET_VERSION, AttributePatch, FunctionPatch

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
        args: example inputs in forward()'s order: tensors, or lists, tuples and dicts of tensors
            (a detector's list of images, say). The ONNX inputs are the tensors, named after their
            parameter (``images``) and, inside a structure, their place in it (``images_0``).
            A torchvision detector with one tensor [N, 3, H, W] (a batch of images of one size)
            is exported as opbridge.detection.BatchedDetector(model): N is then a dynamic axis
            ("batch"; dynamic_axes adds others, e.g. {"images": {0: "batch", 2: "height", 3:
            "width"}}) and the outputs are padded per image (see opbridge.detection).
        path: where to write the .onnx file (one file; weights are embedded). None: don't write.
        exporter: "dynamo" (torch.export based, PyTorch's default) or "legacy" (TorchScript).
        dynamic_axes: dims that may change, by forward() parameter name, e.g.
            {"rois": {0: "num_rois"}}. For a parameter holding a structure of tensors, the dims
            apply to every tensor in it ({"images": {1: "height", 2: "width"}}), or the value
            mirrors the structure ({"images": [{1: "height", 2: "width"}]}). The same
            description serves both exporters.
        output_names: names of the graph outputs.
        compat: None for opbridge's own identities, or "mmcv" / "mmdeploy" to write the identities
            those projects export (for tools that expect their ONNX files). Ops those projects
            export with standard ONNX ops for ONNX Runtime (instance and group normalization) are
            then written as PyTorch writes them.
        standard_ops: ops (kernel stems, e.g. ("deform_conv",)) to export to standard ONNX ops, or
            ORT's own, for runtimes that have them, instead of to opbridge's: "deform_conv" gives
            ONNX DeformConv (opset 19), "nms" ONNX NonMaxSuppression, "group_norm" the Reshape ->
            InstanceNormalization -> Reshape -> Mul -> Add chain, "instance_norm" ONNX
            InstanceNormalization (these with the dynamo exporter only); "inverse" gives ORT's
            com.microsoft::Inverse (either exporter).
    """
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter must be one of {EXPORTERS}, got {exporter!r}")
    if compat is not None and compat not in COMPAT_DOMAINS:
        raise ValueError(f"compat must be None or one of {COMPAT_DOMAINS}, got {compat!r}")
    known = list(manifest.load())
    if set(standard_ops) - set(known):
        raise ValueError(f"standard_ops must be kernel names of {sorted(known)}, got {list(standard_ops)}")
    mappings = {m.kernel: m for m in EXPORT_MAPPINGS}
    without = [k for k in known
               if k in standard_ops and (k not in mappings or exporter not in mappings[k].standard_exporters)]
    if without:
        offered = sorted(m.kernel for m in EXPORT_MAPPINGS if exporter in m.standard_exporters)
        raise ValueError(f"standard_ops: {without} have no standard-ONNX export with the {exporter} exporter; "
                         f"those that do: {offered}")
    model, dynamic_axes, output_names = for_export(model, tuple(args), dynamic_axes, output_names)
    inputs = ExportInputs(model, tuple(args), dynamic_axes)
    # With compat, the ops the peers export with standard ONNX ops are written that way.
    peers_standard = tuple(m.kernel for m in EXPORT_MAPPINGS if m.peers_export_standard) if compat else ()
    with _patched_functions():
        # Under the export's patches: a half model's eager call then runs opbridge's ops, which take half
        # tensors on the CPU (torchvision's nms kernel refuses them).
        _prepare(model, inputs.args)
        if exporter == "dynamo":
            proto = _export_dynamo(model, inputs, output_names, standard_ops, peers_standard)
        else:
            proto = _export_legacy(model, inputs, output_names, (*standard_ops, *peers_standard))
    if isinstance(model, detection.BatchedDetector):
        _declare_detector_outputs(proto, model)
    if compat is not None:
        rename_domain(proto, compat)
    if path is not None:
        onnx.save(proto, str(path))
    return proto


def for_export(model, args: tuple, dynamic_axes, output_names) -> tuple:
    """The module, dynamic axes and output names export() exports: a torchvision detector given a
    batch tensor becomes a BatchedDetector, whose batch axis is dynamic and whose outputs are named
    unless the caller says otherwise."""
    images = args[0] if len(args) == 1 else None
    if detection.is_detector(model):
        if isinstance(images, torch.Tensor):
            model = detection.BatchedDetector(model)
        elif isinstance(images, (list, tuple)) and len(images) > 1:
            raise ValueError(f"a list of {len(images)} images exports a graph for exactly {len(images)} images: give "
                             f"one image (a list [image]), or the images as one tensor [N, 3, H, W] for a dynamic batch "
                             f"(images of one size)")
    if isinstance(model, detection.BatchedDetector):
        detection.check_images(images)
        dynamic_axes = {"images": {0: detection.BATCH_AXIS}} if dynamic_axes is None else dynamic_axes
        output_names = model.output_names if output_names is None else output_names
    return model, dynamic_axes, output_names


def _declare_detector_outputs(proto: onnx.ModelProto, model) -> None:
    """Declares the batched detector's output shapes, [batch, K, ...] (the exporters leave some dims
    unnamed or name them per output), so that every output shares the input's batch axis, which
    Triton's dynamic batching needs, and masks the input's height and width."""
    images = next(i for i in proto.graph.input if i.name == "images")
    batch, _, height, width = (d.dim_param or d.dim_value for d in images.type.tensor_type.shape.dim)
    for output, shape in zip(proto.graph.output, model.output_shapes(batch, height, width).values()):
        declared = output.type.tensor_type.shape
        declared.ClearField("dim")
        for d in shape:
            if isinstance(d, str):
                declared.dim.add().dim_param = d
            else:
                declared.dim.add().dim_value = d


def custom_nodes(model: onnx.ModelProto) -> list[str]:
    """The "domain::op_type" of every custom node (check.is_custom_node), in graph order."""
    return [f"{n.domain}::{n.op_type}" for n in model.graph.node if is_custom_node(n)]


def rename_domain(model: onnx.ModelProto, domain: str) -> None:
    """Rewrites opbridge nodes to the identities `domain` ("mmcv" or "mmdeploy") uses for them.

    A node is renamed to the op's identity in `domain` that has the same inputs, outputs and
    attributes, so only domain and op_type change; a node without one is an error. An identity
    that also takes attributes the kernel ignores (mmdeploy's im2col_step) gets them with their
    defaults, as the peer's exporter writes them.
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
        for attribute in op.extra_attributes(target, identity) or ():
            node.attribute.append(onnx.helper.make_attribute(attribute.name, attribute.default))
        node.domain, node.op_type = target.split("::")
    imports = [o for o in model.opset_import if o.domain not in (DOMAIN, domain)]
    del model.opset_import[:]
    model.opset_import.extend(imports + [onnx.helper.make_opsetid(domain, 1)])


@dataclasses.dataclass
class ExportInputs:
    """The example arguments as the exporters see them: forward()'s parameter names, the tensor
    leaves of the arguments (flattened as PyTorch flattens them) with their ONNX input names, and
    the dynamic dims of every leaf."""

    params: list[str]
    args: tuple
    leaves: list[torch.Tensor]
    names: list[str]
    leaf_axes: list[dict[int, str]]  # per leaf; {} when static
    dynamic: bool

    def __init__(self, model: torch.nn.Module, args: tuple, dynamic_axes: dict | None):
        signature = inspect.signature(model.forward).parameters.values()
        params = [p.name for p in signature if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < len(args):
            raise ValueError(f"forward() takes {len(params)} positional inputs, {len(args)} were given")
        self.params, self.args = params[:len(args)], args
        dynamic_axes = dynamic_axes or {}
        unknown = set(dynamic_axes) - set(self.params)
        if unknown:
            raise ValueError(f"dynamic_axes names {sorted(unknown)} are not forward() parameters {self.params}")
        self.leaves, self.names, self.leaf_axes = [], [], []
        for param, arg in zip(self.params, args):
            axes = dynamic_axes.get(param)
            for path, leaf in pytree.tree_flatten_with_path(arg)[0]:
                if not isinstance(leaf, torch.Tensor):
                    raise TypeError(f"argument {param!r}{pytree.keystr(path)} is a {type(leaf).__name__}; "
                                    "export takes tensors and lists, tuples and dicts of them")
                self.leaves.append(leaf)
                self.names.append(param + "".join(f"_{_key_name(k)}" for k in path))
                self.leaf_axes.append(_axes_at(axes, path, param))
        self.dynamic = any(self.leaf_axes)

    def dynamic_shapes(self) -> dict:
        """torch.export's dynamic_shapes: per parameter, the structure of its argument with the
        dims of each tensor (strings name them in the ONNX file)."""
        leaves = iter(self.leaf_axes)
        return {param: pytree.tree_map(lambda _: next(leaves) or None, arg) for param, arg in zip(self.params, self.args)}

    def legacy_dynamic_axes(self) -> dict:
        return {name: axes for name, axes in zip(self.names, self.leaf_axes) if axes}


def _key_name(key) -> str:
    for attribute in ("idx", "key", "name"):
        if hasattr(key, attribute):
            return str(getattr(key, attribute))
    return str(key)


def _axes_at(axes, path, param) -> dict[int, str]:
    """The dynamic dims given for the leaf at `path`: a dict of dims applies to every leaf below;
    a structure is followed along the path."""
    for key in path:
        if axes is None or (isinstance(axes, dict) and all(isinstance(k, int) for k in axes)):
            break
        try:
            axes = axes[getattr(key, "idx", getattr(key, "key", None))]
        except (KeyError, IndexError, TypeError) as err:
            raise ValueError(f"dynamic_axes[{param!r}] does not follow the structure of the argument "
                             f"(at {pytree.keystr(path)})") from err
    if axes is None:
        return {}
    if not (isinstance(axes, dict) and all(isinstance(k, int) for k in axes)):
        raise ValueError(f"dynamic_axes[{param!r}] must map dims (ints) to names, got {axes!r}")
    return dict(axes)


_INHERITED = object()


def _prepare(model: torch.nn.Module, args: tuple) -> None:
    """Lets modules settle state they compute on their first call before the export traces them.

    torchvision's MultiScaleRoIAlign infers its scales from the feature map and image sizes the
    first time it runs and keeps them; traced with dynamic image sizes, that inference turns into
    data-dependent float arithmetic torch.export cannot handle. One eager call (what torchvision's
    own first call does) sets the scales from the example inputs.
    """
    import torchvision

    pending = [m for m in model.modules()
               if isinstance(m, torchvision.ops.MultiScaleRoIAlign) and (m.scales is None or m.map_levels is None)]
    if pending:
        with torch.no_grad():
            model(*args)


@contextlib.contextmanager
def _patched_functions():
    """Applies every export-time rewrite for the duration of the block and undoes it afterwards:
    the ops' patches (opbridge/ops/<kernel>.py) and the model rewrites (opbridge/rewrites.py).

    A FunctionPatch replaces every reference to the function that a loaded module holds
    (torchvision.ops.boxes.batched_nms, and the same function imported into torchvision.ops or a
    user's module); an AttributePatch replaces one attribute (a method of a class)."""
    from opbridge import rewrites

    patches = [p for mapping in EXPORT_MAPPINGS for p in mapping.patches] + list(rewrites.PATCHES)
    function_patches = [p for p in patches if isinstance(p, FunctionPatch)]
    replaced = []
    try:
        for name, module in list(sys.modules.items()):
            # opbridge's own modules keep the originals: its ops' eager implementations call them.
            if name == "opbridge" or name.startswith("opbridge."):
                continue
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for attribute, value in list(namespace.items()):
                for patch in function_patches:
                    if value is patch.original:
                        namespace[attribute] = patch.replacement
                        replaced.append((namespace, attribute, value))
        for patch in patches:
            if isinstance(patch, AttributePatch):
                # A method the class inherits is not in its own namespace: deleted afterwards.
                original = patch.owner.__dict__.get(patch.name, _INHERITED)
                setattr(patch.owner, patch.name, patch.replacement)
                replaced.append((patch.owner, patch.name, original))
        yield
    finally:
        for owner, name, value in reversed(replaced):
            if isinstance(owner, dict):
                owner[name] = value
            elif value is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


def _export_dynamo(model, inputs: ExportInputs, output_names, standard_ops=(), peers_standard=()) -> onnx.ModelProto:
    table = {}
    for mapping in EXPORT_MAPPINGS:
        # A standard kernel's ops keep torch's own translations, except those in `standard`.
        standard = mapping.kernel in standard_ops or mapping.kernel in peers_standard
        table.update(mapping.standard if standard else mapping.dynamo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            model, inputs.args, dynamo=True, custom_translation_table=table,
            dynamic_shapes=inputs.dynamic_shapes() if inputs.dynamic else None,
            input_names=inputs.names, output_names=output_names,
            opset_version=STANDARD_OPS_OPSET if standard_ops else DYNAMO_OPSET,
            external_data=False, verbose=False, report=False,
        )
    return program.model_proto


@contextlib.contextmanager
def _legacy_symbolics(opset: int, standard_ops=()):
    """Registers our symbolics at exactly `opset` for the duration of the block: for the kernels
    in `standard_ops`, their legacy_standard ones, or none (torch's own translation).

    At exactly the export opset they win over torchvision's (opsets 11 and 16) and torch's
    built-ins, and unregistering afterwards brings those back untouched.
    """
    names = []
    try:
        for mapping in EXPORT_MAPPINGS:
            # An op in standard_ops without legacy_standard symbolics keeps torch's translation.
            if mapping.kernel in standard_ops and not mapping.legacy_standard:
                continue
            symbolics = {**mapping.legacy, **mapping.legacy_standard} if mapping.kernel in standard_ops else mapping.legacy
            for name, fn in symbolics.items():
                torch.onnx.register_custom_op_symbolic(name, fn, opset)
                names.append(name)
        yield
    finally:
        for name in names:
            torch.onnx.unregister_custom_op_symbolic(name, opset)


def _export_legacy(model, inputs: ExportInputs, output_names, standard_ops=()) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), _legacy_symbolics(LEGACY_OPSET, standard_ops):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, inputs.args, buffer, dynamo=False, opset_version=LEGACY_OPSET, input_names=inputs.names,
            output_names=output_names, dynamic_axes=inputs.legacy_dynamic_axes() or None,
            custom_opsets={DOMAIN: OPSET_VERSION},
        )
    return onnx.load_from_string(buffer.getvalue())
