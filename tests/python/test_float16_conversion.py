"""float32 files converted to float16 by onnxconverter-common (`convert_float_to_float16`, what
deployers run, with and without keep_io_types): every identity whose type parameter takes float16
is converted with its nodes (no op_block_list entry is needed), opens in ORT and gives, op by op, the
float32 file's outputs on the float16 inputs, rounded once, bit for bit. The converter's default
block list names op types without their domain (ONNX's RoiAlign and NonMaxSuppression among them),
so it keeps opbridge::RoiAlign in float32 behind Casts: those give the same bits. (The graphs are the
conformance suite's thread-count graphs: tests/python/conformance_cases.py.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnxconverter_common import float16

from conformance_cases import CASES
from graphs import onnx_type, round_to, run
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan
from test_conformance import build

OPS = manifest.load()
CONVERTED = [pytest.param(identity, name, keep, id=f"{identity}-{name or 'default'}-keep_io_types={keep}")
             for kernel, op in OPS.items() if "float16" in op.dtypes
             for identity in op.identities
             if any(t.dtype == "T" for t in op.signature(identity).inputs)
             for name, r in CASES[kernel].threads.items() if r.only is None or r.only(op.signature(identity))
             for keep in (False, True)]


@pytest.mark.parametrize("identity,case,keep_io_types", CONVERTED)
def test_converted_file_runs_our_nodes_in_float16(identity, case, keep_io_types):
    op = manifest.find(identity)
    built = build(op, identity, CASES[op.kernel], CASES[op.kernel].threads[case], case)
    t_inputs = {n for n, t, _ in built.inputs if n and t.dtype == "T"}
    t_outputs = {t.name for t in built.signature.outputs if t.dtype == "T"}
    # The outputs typed, as an exporter writes them (the converter casts a float32 output back).
    model = onnx.ModelProto()
    model.CopyFrom(built.model)
    for output in model.graph.output:
        output.type.tensor_type.elem_type = onnx_type(built.dtypes[output.name])
    converted = float16.convert_float_to_float16(model, keep_io_types=keep_io_types)
    domain, op_type = identity.split("::")
    (node,) = [n for n in converted.graph.node if n.domain == domain and n.op_type == op_type]
    blocked = op_type in float16.DEFAULT_OP_BLOCK_LIST
    first = next(n for n, t, _ in built.inputs if n in t_inputs)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(converted.graph.input) + list(onnx.shape_inference.infer_shapes(converted).graph.value_info)}
    want = onnx.TensorProto.FLOAT if blocked else onnx.TensorProto.FLOAT16
    assert types[node.input[list(n for n, _, _ in built.inputs).index(first)]] == want
    rounded = {n: round_to(v, "float16") if n in t_inputs else v for n, v in built.feeds.items()}
    feeds = rounded if keep_io_types else {n: v.astype(np.float16) if n in t_inputs else v for n, v in rounded.items()}
    outputs = run(converted, feeds)
    expected = run(built.model, rounded)
    declared = {v.name: v.type.tensor_type.elem_type for v in converted.graph.output}
    for name, got, want in zip(built.outputs, outputs, expected):
        assert onnx_type(str(got.dtype)) == declared[name], name
        if name in t_outputs:
            # Rounded once to float16: by our node, or after a blocked node by the converter's Cast
            # (which makes the output float16 even with keep_io_types).
            if not blocked or got.dtype == np.float16:
                want = round_to(want, "float16")
            got = got.astype(np.float32)
        assert same_bits_but_nan(want, got), f"output {name}: {int(np.sum(got != want))} of {want.size} differ"
