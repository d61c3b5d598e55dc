"""Whole files converted to float16 by opbridge.float16.convert (with and without keep_io_types), in
an ORT session on the CPU: torchvision detectors from opbridge.export (Mask R-CNN from the legacy
exporter, whose RPN and box head clip against one image size: the converter's duplicate-Cast case;
Faster R-CNN from the dynamo exporter), and an mmdeploy-style file with ops that take float16
and one that does not yet. The session opens and runs, and, op by op, each opbridge node in the
converted run gives the float32 op's outputs on the values it read: those whose op takes float16
read their type parameter's inputs in float16 and round once, bit for bit; the others read float32.
(ORT's CPU provider runs the standard ops in float16 where it has kernels, else in float32 behind
its own Casts. How close a converted detector's detections come to the float32 file's is the GPU
issue's to measure: on random weights they differ as much as half precision makes them.)"""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest

import opbridge
import opbridge.float16
from graphs import round_to
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan
from test_check import mmdeploy_detector_tail
from test_detectors import FAMILIES, build, image

pytestmark = pytest.mark.slow

CASES = [("maskrcnn", "legacy"), ("fasterrcnn", "dynamo")]


@functools.cache
def exported(name: str, exporter: str) -> onnx.ModelProto:
    return opbridge.export(build(FAMILIES[name]), ([image(FAMILIES[name].detect)],), exporter=exporter)


def opbridge_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node if opbridge.float16.takes_float16(n) is not None]


def with_node_values(model: onnx.ModelProto, nodes) -> onnx.ModelProto:
    """`model` with every input and output of `nodes` also a graph output (typed by ORT)."""
    copied = onnx.ModelProto()
    copied.CopyFrom(model)
    present = {o.name for o in copied.graph.output}
    for name in dict.fromkeys(v for n in nodes for v in list(n.input) + list(n.output)):
        if name and name not in present:
            copied.graph.output.append(onnx.helper.make_value_info(name, onnx.TypeProto()))
    return copied


def float32_node_outputs(node: onnx.NodeProto, values: dict) -> list[np.ndarray]:
    """`node` alone in a float32 model, run on `values` (its inputs, the float16 ones as float32)."""
    feeds = {name: values[name].astype(np.float32) if values[name].dtype == np.float16 else values[name]
             for name in node.input if name}
    graph = onnx.helper.make_graph(
        [node], "one_node",
        [onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for name, v in feeds.items()],
        [onnx.helper.make_value_info(name, onnx.TypeProto()) for name in node.output])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17),
                                                         onnx.helper.make_opsetid(node.domain, 1)], ir_version=8)
    return opbridge.create_session(model).run(None, feeds)


def check_op_by_op(converted: onnx.ModelProto, feeds: dict) -> dict:
    """Runs `converted` and checks every opbridge node in it against the float32 op on the values it
    read: a node whose op takes float16 reads its T inputs in float16 and writes the float32 op's
    outputs rounded once; the others read float32 (the converter's Casts) and write the float32
    op's outputs. Returns every value by name."""
    nodes = opbridge_nodes(converted)
    session = opbridge.create_session(with_node_values(converted, nodes))
    values = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    for node in nodes:
        identity = f"{node.domain}::{node.op_type}"
        signature = manifest.find(identity).signature(identity)
        half = opbridge.float16.takes_float16(node)
        for value, tensor in zip(node.input, signature.inputs):
            if value and values[value].dtype.kind == "f":
                want = np.float16 if half else np.float32
                assert values[value].dtype == want, f"{node.name}: input {tensor.name} is {values[value].dtype}"
        for value, tensor, want in zip(node.output, signature.outputs, float32_node_outputs(node, values)):
            got = values[value]
            if half and tensor.dtype == "T":
                assert got.dtype == np.float16, f"{node.name}: output {tensor.name} is {got.dtype}"
                got, want = got.astype(np.float32), round_to(want, "float16")
            assert got.dtype == want.dtype and got.shape == want.shape and same_bits_but_nan(want, got), (
                f"{node.name}: output {tensor.name} differs from the float32 op on its inputs"
                + (", rounded once" if half else ""))
    return values


@pytest.mark.parametrize("keep_io_types", [False, True], ids=lambda k: f"keep_io_types={k}")
@pytest.mark.parametrize("name,exporter", CASES)
def test_converted_detector_runs_our_nodes_in_float16(name, exporter, keep_io_types):
    model = exported(name, exporter)
    converted = opbridge.float16.convert(model, keep_io_types=keep_io_types)
    nodes = opbridge_nodes(converted)
    assert [n.op_type for n in nodes] == [n.op_type for n in opbridge_nodes(model)] and nodes
    assert all(opbridge.float16.takes_float16(n) for n in nodes)
    (graph_input,) = converted.graph.input
    img = image(FAMILIES[name].detect).numpy()
    values = check_op_by_op(converted, {graph_input.name: round_to(img, "float16") if keep_io_types
                                        else img.astype(np.float16)})
    # The detector's own outputs: the float32 file's, its float ones in float16 unless kept float32.
    for o in model.graph.output:
        if o.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            assert values[o.name].dtype == (np.float32 if keep_io_types else np.float16), o.name


def mmdeploy_file() -> onnx.ModelProto:
    """test_check's mmdeploy detector tail (mmdeploy::grid_sampler and mmdeploy::TRTBatchedNMS, which
    take float16) with mmdeploy::TRTBicubicInterpolate (which does not yet) upsampling the features
    into a fourth output."""
    model = mmdeploy_detector_tail()
    model.graph.node.append(onnx.helper.make_node("TRTBicubicInterpolate", ["features"], ["upsampled"],
                                                  domain="mmdeploy", scale_factor=[2.0, 2.0], align_corners=0))
    model.graph.output.append(onnx.helper.make_tensor_value_info("upsampled", onnx.TensorProto.FLOAT, None))
    return model


@pytest.mark.parametrize("keep_io_types", [False, True], ids=lambda k: f"keep_io_types={k}")
def test_converted_mmdeploy_file(keep_io_types):
    """An mmdeploy-style file (mmdeploy_file): the sampler and the NMS read float16, the bicubic
    interpolation stays float32 behind the converter's Casts, and all give the float32 op's outputs."""
    converted = opbridge.float16.convert(mmdeploy_file(), keep_io_types=keep_io_types)
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 60, (2, 40, 1, 2))
    feeds = {"features": rng.standard_normal((2, 8, 32, 32)), "grid": rng.uniform(-1.1, 1.1, (2, 32, 32, 2)),
             "boxes": np.concatenate([xy, xy + rng.uniform(2, 20, xy.shape)], -1), "logits": rng.standard_normal((2, 40, 3))}
    dtype = np.float32 if keep_io_types else np.float16
    values = check_op_by_op(converted, {n: round_to(v, "float16").astype(dtype) for n, v in feeds.items()})
    by_type = {n.op_type: opbridge.float16.takes_float16(n) for n in opbridge_nodes(converted)}
    assert by_type == {"grid_sampler": True, "TRTBatchedNMS": True, "TRTBicubicInterpolate": False}
    assert values["dets"].dtype == dtype and values["labels"].dtype == np.int32
    assert values["upsampled"].dtype == dtype and values["upsampled"].shape == (2, 8, 64, 64)


@pytest.mark.parametrize("exporter", ["legacy", "dynamo"])
def test_half_detector_exports_with_our_nodes_in_half(exporter):
    """A half model (model.half(), here torchvision's Faster R-CNN with the MobileNetV3 320 backbone)
    exports with either exporter, although torchvision's CPU nms refuses half tensors (the export
    runs the model eagerly, and opbridge's batched_nms computes in float32 on the half values, as the
    node does): its input and float outputs are float16, and op by op each opbridge node reads
    float16 and gives the float32 op's outputs on its inputs, rounded once."""
    family = FAMILIES["fasterrcnn_mobilenet_320"]
    img = image(family.detect).half()
    model = opbridge.export(build(family).half(), ([img],), exporter=exporter)
    (graph_input,) = model.graph.input
    assert graph_input.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    nodes = opbridge_nodes(model)
    assert sorted({n.op_type for n in nodes}) == ["BatchedNms", "MultiScaleRoiAlign"]
    values = check_op_by_op(model, {graph_input.name: img.numpy()})
    float_outputs = [o.name for o in model.graph.output if values[o.name].dtype.kind == "f"]
    assert float_outputs and all(values[name].dtype == np.float16 for name in float_outputs)
