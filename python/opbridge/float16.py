"""Float32 ONNX files with opbridge's, mmcv's or mmdeploy's nodes converted to float16, for half
precision in ONNX Runtime: `opbridge float16 model.onnx model_fp16.onnx [--keep-io-types]`.

    converted = opbridge.float16.convert(onnx.load("model.onnx"))            # float16 inputs and outputs
    converted = opbridge.float16.convert(model, keep_io_types=True)         # float32 at the boundary

The conversion is ONNX Runtime's own (onnxruntime.transformers.float16, in every onnxruntime and
onnxruntime-gpu wheel: it needs only onnxruntime, onnx and numpy), told which nodes stay float32:
- the standard ONNX nodes of its default block list (ONNX's NonMaxSuppression, RoiAlign, TopK, Min,
  Max, ...), by node, so that an opbridge node of the same op type (opbridge::RoiAlign,
  mmcv::NonMaxSuppression) is not blocked with them, as the converter's op-type list does;
- the nodes of opbridge identities that do not take float16 yet (the manifest's data types, as
  `opbridge ops` lists them): the converter runs them in float32 behind Casts, exactly as in the
  float32 file.
Every other opbridge node then reads and writes float16: its float32 kernel's outputs on the half
values, rounded once (README, "Half precision").

Three more things make whole files convert:
- onnxruntime.transformers.float16 of ORT 1.30 and 1.32 (which names a Cast after its value, where
  1.21 names it after its node) gives a float16 value read by two blocked nodes two Casts of one
  name and one output (Faster R-CNN's legacy export: the image size is clipped against by the RPN's
  and the box head's Min), which ORT refuses ("two nodes with same node name"). The duplicates are
  removed: they compute the same value.
- The converter keys its rules by op type alone, whatever the domain (ORT's GroupNorm keeps its
  scale and bias float32, for one), so the registered nodes take op types of their own while it runs.
- ONNX's type inference knows nothing of custom nodes, and the converter casts only around values
  whose type it knows (a float32-only opbridge node's outputs, and what reads them); so the outputs of
  registered nodes are declared first, from the manifest.
onnxconverter-common's convert_float_to_float16 (1.16.0 tested; the Cast defect came with 1.15) is
not used: it leaves every Cast to float32 in the file unchanged while marking its output float16,
which ORT refuses (every exported detector has such Casts: microsoft/onnxconverter-common issue 320),
and it raises AttributeError on a Cast to float32 with two readers after a blocked node. The op by
op conversion of opbridge's nodes by it is tested (tests/python/test_float16_conversion.py).
"""

from __future__ import annotations

import onnx

from opbridge import manifest
from opbridge._optional import require_onnxruntime

# The ONNX standard's domains: a node there with an op type of the converter's block list is ONNX's op.
_STANDARD_DOMAINS = ("", "ai.onnx")


def convert(model: onnx.ModelProto, keep_io_types: bool = False, node_block_list=()) -> onnx.ModelProto:
    """`model` (not changed) with its float32 tensors, initializers and nodes in float16, except the
    nodes that must stay float32 (above) and those named in node_block_list. keep_io_types: the
    graph's float32 inputs and outputs stay float32, with Casts inside the graph."""
    require_onnxruntime("opbridge.float16.convert")
    from onnxruntime.transformers import float16 as ort_float16

    model = _copy(model)
    _name_unnamed_nodes(model.graph)
    _declare_registered_outputs(model)
    blocked = _float32_nodes(model.graph, set(ort_float16.DEFAULT_OP_BLOCK_LIST))
    _disguise_registered_nodes(model.graph)
    converted = ort_float16.convert_float_to_float16(model, keep_io_types=keep_io_types, op_block_list=[],
                                                     node_block_list=sorted(blocked | set(node_block_list)))
    _undisguise_registered_nodes(converted.graph)
    _remove_duplicate_casts(converted.graph)
    return converted


def takes_float16(node: onnx.NodeProto) -> bool | None:
    """Whether the opbridge identity of `node` reads and writes its float tensors in float16 (every
    float input and output is its type parameter T, and T takes float16); None: no opbridge identity."""
    try:
        op = manifest.find(f"{node.domain}::{node.op_type}")
    except KeyError:
        return None
    signature = op.signature(f"{node.domain}::{node.op_type}")
    tensors = signature.inputs + signature.outputs
    return "float16" in op.dtypes and all(t.dtype == "T" or t.dtype not in ("float32", "float64") for t in tensors) \
        and any(t.dtype == "T" for t in tensors)


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copied = onnx.ModelProto()
    copied.CopyFrom(model)
    return copied


def _graphs(graph: onnx.GraphProto):
    """`graph` and every subgraph in it (If, Loop and Scan bodies)."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attribute.g)
            for sub in attribute.graphs:
                yield from _graphs(sub)


def _name_unnamed_nodes(graph: onnx.GraphProto) -> None:
    """Unique names for nodes without one: the converter blocks nodes by name."""
    used = {n.name for g in _graphs(graph) for n in g.node}
    count = 0
    for g in _graphs(graph):
        for node in g.node:
            if not node.name:
                while f"{node.op_type}_float16_{count}" in used:
                    count += 1
                node.name = f"{node.op_type}_float16_{count}"
                used.add(node.name)


def _float32_nodes(graph: onnx.GraphProto, op_block_list: set) -> set:
    """Names of the nodes that must stay float32: ONNX's nodes of the converter's block list, and
    opbridge nodes whose identity does not take float16."""
    names = set()
    for g in _graphs(graph):
        for node in g.node:
            takes = takes_float16(node)
            if takes is False or (takes is None and node.domain in _STANDARD_DOMAINS and node.op_type in op_block_list):
                names.add(node.name)
    return names


def _declare_registered_outputs(model: onnx.ModelProto) -> None:
    """Declares (value_info) the element type of every registered node's output that has none, from
    the manifest (T: the type of the node's T inputs), and lets ONNX's type inference carry the types
    on past it, until nothing new is learned."""
    graph = model.graph
    for _ in range(len(graph.node) + 1):
        inferred = onnx.shape_inference.infer_shapes(model)
        types = {v.name: v.type.tensor_type.elem_type for v in
                 list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
                 if v.type.tensor_type.elem_type}
        types.update({t.name: t.data_type for t in graph.initializer})
        declared = []
        for node in graph.node:
            try:
                op = manifest.find(f"{node.domain}::{node.op_type}")
            except KeyError:
                continue
            signature = op.signature(f"{node.domain}::{node.op_type}")
            t_type = next((types[name] for name, t in zip(node.input, signature.inputs)
                           if t.dtype == "T" and name in types), None)
            for name, t in zip(node.output, signature.outputs):
                fixed = getattr(onnx.TensorProto, manifest.ONNX_TYPES.get(t.dtype, ""), None)  # None: "int64 or int32"
                elem_type = t_type if t.dtype == "T" else fixed
                if name and name not in types and elem_type:
                    declared.append(onnx.helper.make_tensor_value_info(name, elem_type, None))
        if not declared:
            return
        graph.value_info.extend(declared)


# What _disguise_registered_nodes appends to an op type: no ONNX or ORT op type contains it.
_DISGUISE = ".opbridge_float16"


def _disguise_registered_nodes(graph: onnx.GraphProto) -> None:
    """Gives every registered node an op type of its own for the conversion: the converter keys its
    rules by op type alone, whatever the domain, and would apply ORT's own GroupNorm's to
    opbridge::GroupNorm (scale and bias kept float32: its inputs' one dtype broken)."""
    for g in _graphs(graph):
        for node in g.node:
            if takes_float16(node) is not None:
                node.op_type += _DISGUISE


def _undisguise_registered_nodes(graph: onnx.GraphProto) -> None:
    for g in _graphs(graph):
        for node in g.node:
            if node.op_type.endswith(_DISGUISE):
                node.op_type = node.op_type[: -len(_DISGUISE)]


def _remove_duplicate_casts(graph: onnx.GraphProto) -> None:
    """Keeps one of identical nodes (name, inputs, outputs and attributes equal), and one value_info
    per name: the converter's two Casts of one value before two blocked readers."""
    for g in _graphs(graph):
        seen, kept = set(), []
        for node in g.node:
            key = node.SerializeToString(deterministic=True)
            if node.op_type == "Cast" and key in seen:
                continue
            seen.add(key)
            kept.append(node)
        if len(kept) < len(g.node):
            del g.node[:]
            g.node.extend(kept)
        names, infos = set(), []
        for info in g.value_info:
            if info.name not in names:
                names.add(info.name)
                infos.append(info)
        if len(infos) < len(g.value_info):
            del g.value_info[:]
            g.value_info.extend(infos)
