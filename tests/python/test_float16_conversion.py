"""float32 files converted to float16, op by op, with and without keep_io_types, by the two
converters a deployer has: opbridge.float16.convert (ONNX Runtime's converter, told which nodes stay
float32) and onnxconverter-common's convert_float_to_float16 (what mmdeploy's fp16 path runs). Each
file opens in ORT and gives the float32 file's outputs on the float16 inputs, rounded once, bit for
bit:
- opbridge.float16.convert: every identity with a float tensor. Those whose type parameter takes
  float16 read float16; the others stay float32 behind Casts.
- onnxconverter-common: every identity whose type parameter takes float16 is converted with its
  nodes (no op_block_list entry is needed). Its default block list names op types without their
  domain (ONNX's RoiAlign and NonMaxSuppression among them), so it keeps opbridge::RoiAlign in float32
  behind Casts: those give the same bits.
(The graphs are the conformance suite's thread-count graphs: tests/python/conformance_cases.py.)
Whole detectors converted by opbridge.float16.convert: tests/python/test_float16_detectors.py."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnxconverter_common import float16

import opbridge.float16
from conformance_cases import CASES
from graphs import onnx_type, round_to, run
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan
from test_conformance import build

OPS = manifest.load()


def _onnxconverter_common(model, keep_io_types):
    return float16.convert_float_to_float16(model, keep_io_types=keep_io_types)


# Converter -> (convert(model, keep_io_types), which identities it converts, whether it keeps a node float32).
CONVERTERS = {
    "opbridge": (opbridge.float16.convert, lambda op: True, lambda node: not opbridge.float16.takes_float16(node)),
    "onnxconverter_common": (_onnxconverter_common, lambda op: "float16" in op.dtypes,
                             lambda node: node.op_type in float16.DEFAULT_OP_BLOCK_LIST),
}


def _has_float_tensor(op, identity: str) -> bool:
    signature = op.signature(identity)
    return any(t.dtype == "float32" or (t.dtype == "T" and "float32" in op.dtypes)
               for t in signature.inputs + signature.outputs)


CONVERTED = [pytest.param(converter, identity, name, keep,
                          id=f"{converter}-{identity}-{name or 'default'}-keep_io_types={keep}")
             for converter, (_, converts, _) in CONVERTERS.items()
             for kernel, op in OPS.items() if converts(op)
             for identity in op.identities if _has_float_tensor(op, identity)
             if converter == "opbridge" or any(t.dtype == "T" for t in op.signature(identity).inputs)
             for name, r in CASES[kernel].threads.items() if r.only is None or r.only(op.signature(identity))
             for keep in (False, True)]


@pytest.mark.parametrize("converter,identity,case,keep_io_types", CONVERTED)
def test_converted_file_gives_the_float32_outputs_rounded_once(converter, identity, case, keep_io_types):
    convert, _, keeps_float32 = CONVERTERS[converter]
    op = manifest.find(identity)
    built = build(op, identity, CASES[op.kernel], CASES[op.kernel].threads[case], case)
    float_inputs = {n for n, _, _ in built.inputs if n and built.input_dtypes[n] == "float32"}
    float_outputs = {t.name for t in built.signature.outputs if built.dtypes[t.name] == "float32"}
    # The outputs typed, as an exporter writes them (the converter casts a float32 output back).
    model = onnx.ModelProto()
    model.CopyFrom(built.model)
    for output in model.graph.output:
        output.type.tensor_type.elem_type = onnx_type(built.dtypes[output.name])
    converted = convert(model, keep_io_types)
    domain, op_type = identity.split("::")
    (node,) = [n for n in converted.graph.node if n.domain == domain and n.op_type == op_type]
    blocked = keeps_float32(node)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(converted.graph.input) + list(onnx.shape_inference.infer_shapes(converted).graph.value_info)}
    first = next((n for n, _, _ in built.inputs if n in float_inputs), None)
    if first is not None:
        want = onnx.TensorProto.FLOAT if blocked else onnx.TensorProto.FLOAT16
        assert types[node.input[list(n for n, _, _ in built.inputs).index(first)]] == want
    rounded = {n: round_to(v, "float16") if n in float_inputs else v for n, v in built.feeds.items()}
    feeds = rounded if keep_io_types else {n: v.astype(np.float16) if n in float_inputs else v for n, v in rounded.items()}
    outputs = run(converted, feeds)
    expected = run(built.model, rounded)
    declared = {v.name: v.type.tensor_type.elem_type for v in converted.graph.output}
    for name, got, want in zip(built.outputs, outputs, expected):
        assert onnx_type(str(got.dtype)) == declared[name], name
        if name in float_outputs:
            # Rounded once to float16: by our node, or after a blocked node by the converter's Cast
            # (onnxconverter-common leaves a blocked node's graph output float32 with keep_io_types).
            if not blocked or got.dtype == np.float16 or converter == "opbridge":
                want = round_to(want, "float16")
            got = got.astype(np.float32)
        assert same_bits_but_nan(want, got), f"output {name}: {int(np.sum(got != want))} of {want.size} differ"


@pytest.mark.parametrize("keep_io_types", [False, True], ids=lambda k: f"keep_io_types={k}")
def test_float32_only_node_between_standard_nodes(keep_io_types):
    """An opbridge node whose op takes float32 only (CornerPool), between standard nodes and with no
    value_info for its output (ONNX's type inference cannot give one): opbridge.float16.convert
    declares it, so the converter casts the node's inputs to float32 and its output back to float16,
    and the file runs: the float32 file's output on the float16 input, rounded where it is float16."""
    nodes = [onnx.helper.make_node("Relu", ["x"], ["relu"]),
             onnx.helper.make_node("CornerPool", ["relu"], ["pooled"], domain="opbridge", mode=0),
             onnx.helper.make_node("Neg", ["pooled"], ["y"])]
    float32 = onnx.TensorProto.FLOAT
    graph = onnx.helper.make_graph(nodes, "corner_pool_between", [onnx.helper.make_tensor_value_info("x", float32, [1, 2, 5, 6])],
                                   [onnx.helper.make_tensor_value_info("y", float32, [1, 2, 5, 6])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17),
                                                         onnx.helper.make_opsetid("opbridge", 1)], ir_version=8)
    converted = opbridge.float16.convert(model, keep_io_types=keep_io_types)
    (pool,) = [n for n in converted.graph.node if n.op_type == "CornerPool"]
    types = {v.name: v.type.tensor_type.elem_type for v in onnx.shape_inference.infer_shapes(converted).graph.value_info}
    assert types[pool.input[0]] == float32 and types[pool.output[0]] == float32
    x = round_to(np.random.default_rng(0).standard_normal((1, 2, 5, 6)), "float16")
    (got,) = run(converted, {"x": x if keep_io_types else x.astype(np.float16)})
    (want,) = run(model, {"x": x})
    assert got.dtype == (np.float32 if keep_io_types else np.float16)
    assert same_bits_but_nan(round_to(want, "float16"), got.astype(np.float32))
