"""`opbridge check model.onnx` on files as mmcv, mmdeploy and opbridge write them, on one with an op
nobody registers, one with a bad attribute, one with only standard ops, and on nodes hidden in
functions and subgraphs: the report object (opbridge.check.check) and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from graphs import one_node_model
from opbridge import check as check_module
from opbridge.check import check

REPO = Path(__file__).resolve().parents[2]
F = TensorProto.FLOAT


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def mmcv_roi_align(**changes) -> onnx.ModelProto:
    """mmcv 1.x's RoIAlign as its symbolic writes it: mmcv::MMCVRoiAlign with all six attributes,
    opset 11 with an "mmcv" opset import version 1, IR 6; the shapes its exporter declares."""
    attrs = dict(output_height=7, output_width=7, spatial_scale=0.25, sampling_ratio=0, mode="avg", aligned=1)
    attrs.update(changes)
    model = one_node_model("mmcv::MMCVRoiAlign", attrs, ["input", "rois"], ["output"], default_opset=11,
                           ir_version=6, input_shapes={"input": [1, 256, 50, 76], "rois": ["num_rois", 5]})
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 11), ("mmcv", 1)]
    return model


def mmdeploy_detector_tail() -> onnx.ModelProto:
    """As mmdeploy writes a detector's tail: a feature warp through mmdeploy::grid_sampler (its
    three int attributes), then mmdeploy::TRTBatchedNMS with every attribute its symbolic writes,
    between standard nodes; opset 11 plus "mmdeploy" 1."""
    nodes = [
        helper.make_node("grid_sampler", ["features", "grid"], ["warped"], domain="mmdeploy",
                         interpolation_mode=0, padding_mode=0, align_corners=0),
        helper.make_node("Sigmoid", ["logits"], ["scores"]),
        helper.make_node("TRTBatchedNMS", ["boxes", "scores"], ["dets", "labels"], domain="mmdeploy",
                         background_label_id=-1, num_classes=3, topk=100, keep_topk=50, score_threshold=0.05,
                         iou_threshold=0.5, is_normalized=0, clip_boxes=0, return_index=0),
    ]
    graph = helper.make_graph(
        nodes, "mmdeploy_tail",
        [helper.make_tensor_value_info("features", F, ["batch", 8, 32, 32]),
         helper.make_tensor_value_info("grid", F, ["batch", 32, 32, 2]),
         helper.make_tensor_value_info("boxes", F, ["batch", "num_boxes", 1, 4]),
         helper.make_tensor_value_info("logits", F, ["batch", "num_boxes", 3])],
        [helper.make_tensor_value_info("warped", F, None),
         helper.make_tensor_value_info("dets", F, ["batch", 50, 5]),
         helper.make_tensor_value_info("labels", TensorProto.INT32, ["batch", 50])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)],
                             ir_version=7)


def opbridge_two_stage() -> onnx.ModelProto:
    """As opbridge.export writes them: opbridge::RoiAlign twice (two feature levels) and
    opbridge::Nms, among standard nodes."""
    nodes = [
        helper.make_node("Relu", ["p2"], ["p2_relu"]),
        helper.make_node("RoiAlign", ["p2_relu", "rois"], ["pooled2"], domain="opbridge", output_height=7,
                         output_width=7, spatial_scale=0.25, sampling_ratio=2, mode="avg", aligned=1),
        helper.make_node("RoiAlign", ["p3", "rois"], ["pooled3"], domain="opbridge", output_height=7,
                         output_width=7, spatial_scale=0.125, sampling_ratio=2, mode="avg", aligned=1),
        helper.make_node("Nms", ["boxes", "scores"], ["keep"], domain="opbridge", iou_threshold=0.5),
    ]
    graph = helper.make_graph(
        nodes, "opbridge_two_stage",
        [helper.make_tensor_value_info("p2", F, [1, 16, 64, 64]), helper.make_tensor_value_info("p3", F, [1, 16, 32, 32]),
         helper.make_tensor_value_info("rois", F, ["num_rois", 5]), helper.make_tensor_value_info("boxes", F, ["n", 4]),
         helper.make_tensor_value_info("scores", F, ["n"])],
        [helper.make_value_info(n, onnx.TypeProto()) for n in ("pooled2", "pooled3", "keep")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("opbridge", 1)],
                             ir_version=8)


def unknown_op() -> onnx.ModelProto:
    return one_node_model("acme::FancyOp", {"alpha": 0.5}, ["x"], ["y"], input_shapes={"x": [1, 3]})


def standard_only() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "plain",
                              [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def hidden_nodes() -> onnx.ModelProto:
    """Custom nodes where a top-level scan misses them: in a model function (called from the graph)
    and in both branches of an If; plus com.microsoft ops, one ORT has and one it has not."""
    grid_node = helper.make_node("grid_sampler", ["x", "g"], ["y"], domain="mmcv", interpolation_mode=0,
                                 padding_mode=0, align_corners=0)
    warp = helper.make_function("acme.functions", "Warp", ["x", "g"], ["y"], [grid_node],
                                [helper.make_opsetid("", 17), helper.make_opsetid("mmcv", 1)])
    then_branch = helper.make_graph([helper.make_node("FancyOp", ["w"], ["t"], domain="acme")], "then", [],
                                    [helper.make_tensor_value_info("t", F, None)])
    else_branch = helper.make_graph([helper.make_node("Gelu", ["w"], ["e"], domain="com.microsoft")], "else", [],
                                    [helper.make_tensor_value_info("e", F, None)])
    nodes = [
        helper.make_node("Warp", ["x", "g"], ["w"], domain="acme.functions"),
        helper.make_node("If", ["cond"], ["out"], name="pick", then_branch=then_branch, else_branch=else_branch),
        helper.make_node("NoSuchContribOp", ["w"], ["z"], domain="com.microsoft"),
    ]
    graph = helper.make_graph(
        nodes, "hidden",
        [helper.make_tensor_value_info("x", F, [1, 1, 4, 4]), helper.make_tensor_value_info("g", F, [1, 2, 2, 2]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", F, None), helper.make_tensor_value_info("z", F, None)])
    return helper.make_model(graph, functions=[warp], ir_version=8, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("mmcv", 1), helper.make_opsetid("acme", 1),
        helper.make_opsetid("acme.functions", 1), helper.make_opsetid("com.microsoft", 1)])


def ops_of(report) -> dict:
    return {op.identity: op for op in report.custom_ops}


def test_mmcv_file_runs(tmp_path):
    report = check(save(mmcv_roi_align(), tmp_path / "mmcv.onnx"))
    assert report.exit_code == 0 and report.ok and report.session_error is None
    (op,) = report.custom_ops
    assert (op.domain, op.op_type, op.count, op.provider, op.where) == ("mmcv", "MMCVRoiAlign", 1, "opbridge", ("graph",))
    assert report.opsets == {"": 11, "mmcv": 1} and report.node_count == 1
    # The declared shapes went through opbridge's shape inference: the output's shape follows them.
    values = {(v.kind, v.name): v for v in report.values}
    assert values[("output", "output")].shape == ("num_rois", 256, 7, 7)
    assert values[("input", "rois")].shape == ("num_rois", 5)
    assert report.advice() == []


def test_mmdeploy_file_runs(tmp_path):
    report = check(save(mmdeploy_detector_tail(), tmp_path / "mmdeploy.onnx"))
    assert report.exit_code == 0, report.format()
    assert {i: (op.count, op.provider) for i, op in ops_of(report).items()} == {
        "mmdeploy::grid_sampler": (1, "opbridge"), "mmdeploy::TRTBatchedNMS": (1, "opbridge")}
    assert report.node_count == 3  # the standard Sigmoid counts as a node, not as a custom op
    values = {(v.kind, v.name): v.shape for v in report.values}
    assert values[("output", "dets")] == ("batch", 50, 5) and values[("output", "warped")] == ("batch", 8, 32, 32)


def test_op_in_the_default_domain_that_onnx_does_not_define(tmp_path):
    # mmcv's TensorRT preprocessing renames InstanceNormalization in place: the node keeps domain "".
    node = helper.make_node("MMCVInstanceNormalization", ["input", "scale", "B"], ["output"], epsilon=1e-5)
    graph = helper.make_graph([node], "mmcv_trt_instance_norm", [
        helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 4, 8, 8]),
        helper.make_tensor_value_info("scale", TensorProto.FLOAT, [4]),
        helper.make_tensor_value_info("B", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    report = check(save(model, tmp_path / "mmcv_trt.onnx"))
    assert report.exit_code == 0, report.format()
    assert [(op.domain, op.op_type, op.count, op.provider) for op in report.custom_ops] == [
        ("", "MMCVInstanceNormalization", 1, "opbridge")]


def test_opbridge_file_counts_each_op(tmp_path):
    report = check(save(opbridge_two_stage(), tmp_path / "opbridge.onnx"))
    assert report.exit_code == 0, report.format()
    assert [(op.identity, op.count, op.provider) for op in report.custom_ops] == [
        ("opbridge::RoiAlign", 2, "opbridge"), ("opbridge::Nms", 1, "opbridge")]
    assert report.node_count == 4


def test_every_opbridge_identity_runs_on_the_gpu():
    from opbridge import manifest

    cpu_only = [i for op in manifest.load().values() for i in op.identities if "CUDA" not in op.providers(i)]
    assert cpu_only == []


def test_says_which_opbridge_nodes_fall_back_to_the_cpu_in_a_cuda_session(tmp_path, monkeypatch):
    # Every identity has a CUDA kernel today: the manifest is made to say that soft-NMS has none, as
    # for an op whose CUDA kernel has not landed yet.
    import dataclasses

    from opbridge import manifest

    soft_nms = manifest.load()["soft_nms"]
    cpu_only = dataclasses.replace(soft_nms, identity_providers={i: ("cpu",) for i in soft_nms.identities})
    real_find = manifest.find
    monkeypatch.setattr(manifest, "find", lambda identity: cpu_only if identity in soft_nms.identities
                        else real_find(identity))
    nodes = [helper.make_node("RoiAlign", ["input", "rois"], ["pooled"], domain="opbridge", output_height=2,
                              output_width=2),
             helper.make_node("SoftNonMaxSuppression", ["boxes", "scores"], ["dets", "inds"], domain="opbridge"),
             helper.make_node("SoftNonMaxSuppression", ["boxes", "scores"], ["dets_again", "inds_again"],
                              domain="opbridge")]
    graph = helper.make_graph(nodes, "mixed", [
        helper.make_tensor_value_info("input", F, [1, 2, 8, 8]),
        helper.make_tensor_value_info("rois", F, ["R", 5]),
        helper.make_tensor_value_info("boxes", F, ["N", 4]),
        helper.make_tensor_value_info("scores", F, ["N"])],
        [helper.make_tensor_value_info(name, F if name.startswith("d") or name == "pooled" else TensorProto.INT64, None)
         for name in ("pooled", "dets", "inds", "dets_again", "inds_again")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("opbridge", 1)],
                              ir_version=8)
    report = check(save(model, tmp_path / "mixed.onnx"))
    assert report.exit_code == 0, report.format()
    assert {op.identity: op.on_gpu for op in report.custom_ops} == {"opbridge::RoiAlign": True,
                                                                   "opbridge::SoftNonMaxSuppression": False}
    assert [op.identity for op in report.cpu_fallbacks] == ["opbridge::SoftNonMaxSuppression"]
    assert report.gpu_summary() == (
        "In a CUDA session (onnxruntime-gpu, a CUDA build of opbridge): 2 of 3 opbridge nodes fall back to the "
        "CPU, with copies to and from the GPU around them: opbridge::SoftNonMaxSuppression (2).")
    assert report.gpu_summary() in report.format()
    assert report.to_dict()["cpu_fallbacks"] == ["opbridge::SoftNonMaxSuppression"]


def test_op_nobody_registers(tmp_path):
    report = check(save(unknown_op(), tmp_path / "acme.onnx"))
    assert report.exit_code == check_module.EXIT_UNSUPPORTED == 1
    (op,) = report.unsupported
    assert (op.identity, op.provider, op.nearest) == ("acme::FancyOp", "nobody", ())
    assert "FancyOp" in report.session_error  # ORT's own error is kept
    (advice,) = report.advice()
    assert advice.startswith("acme::FancyOp is not an opbridge op, and ONNX Runtime does not provide it.")
    assert "`opbridge ops`" in advice and "opbridge.export" in advice and "issue tracker" in advice


def test_misspelt_identity_names_the_nearest_ones(tmp_path):
    """A RoIAlign in a domain or spelling opbridge does not register: the nearest identities are named."""
    report = check(save(one_node_model("mmcv::RoIAlign", {}, ["input", "rois"], ["output"]), tmp_path / "m.onnx"))
    (op,) = report.unsupported
    assert op.nearest[:2] == ("opbridge::RoiAlign", "mmcv::MMCVRoiAlign")
    (advice,) = report.advice()
    assert "opbridge registers other mmcv ops, not this one" in advice
    assert "Nearest opbridge identities: opbridge::RoiAlign, mmcv::MMCVRoiAlign" in advice


def test_bad_attribute_shows_orts_error(tmp_path):
    report = check(save(mmcv_roi_align(mode="bogus"), tmp_path / "bad_mode.onnx"))
    assert report.exit_code == check_module.EXIT_SESSION_FAILED == 3
    assert report.unsupported == [] and report.custom_ops[0].provider == "opbridge"
    assert 'mmcv::MMCVRoiAlign: mode must be "avg" or "max", got "bogus"' in report.session_error
    (advice,) = report.advice()
    assert "docs/ops/roi_align.md" in advice


def test_declared_input_dtype_the_op_refuses(tmp_path):
    """A float64 feature map fed to mmcv's RoIAlign: the session fails with the op's own error
    naming the input and the dtype it takes."""
    model = mmcv_roi_align()
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    report = check(save(model, tmp_path / "bad_type.onnx"))
    assert report.exit_code == check_module.EXIT_SESSION_FAILED == 3
    assert "mmcv::MMCVRoiAlign: input 'input' has dtype float64; the op takes float32" in report.session_error


def test_declared_output_shape_that_inference_contradicts(tmp_path):
    """ORT drops a declared output shape its inference contradicts and runs the model (exit 0);
    the report says which output and both shapes."""
    model = mmcv_roi_align()
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("output", F, ["num_rois", 256, 5, 5]))
    report = check(save(model, tmp_path / "bad_shape.onnx"))
    assert report.exit_code == 0
    assert report.shape_conflicts == [
        "output 'output': the file declares ['num_rois', 256, 5, 5], ONNX Runtime infers ['num_rois', 256, None, None]"]
    assert report.advice()[0].startswith(report.shape_conflicts[0] + ". The model runs")
    assert "but 1 declared output shapes are wrong" in report.summary()
    assert check(save(mmcv_roi_align(), tmp_path / "good.onnx")).shape_conflicts == []


def test_standard_ops_only(tmp_path):
    report = check(save(standard_only(), tmp_path / "plain.onnx"))
    assert report.exit_code == 0 and report.custom_ops == [] and report.node_count == 1
    assert "only standard ONNX ops" in report.format()


def test_nodes_in_functions_and_subgraphs_are_found(tmp_path):
    report = check(save(hidden_nodes(), tmp_path / "hidden.onnx"))
    ops = ops_of(report)
    assert set(ops) == {"mmcv::grid_sampler", "acme.functions::Warp", "acme::FancyOp", "com.microsoft::Gelu",
                        "com.microsoft::NoSuchContribOp"}
    assert (ops["mmcv::grid_sampler"].provider, ops["mmcv::grid_sampler"].where) == (
        "opbridge", ("function acme.functions::Warp",))
    assert ops["acme.functions::Warp"].provider == "model function"
    assert (ops["acme::FancyOp"].provider, ops["acme::FancyOp"].where) == ("nobody", ("graph > If 'pick'.then_branch",))
    assert (ops["com.microsoft::Gelu"].provider, ops["com.microsoft::Gelu"].where) == (
        "onnxruntime", ("graph > If 'pick'.else_branch",))
    assert ops["com.microsoft::NoSuchContribOp"].provider == "nobody"
    assert report.node_count == 6 and report.exit_code == 1
    assert {op.identity for op in report.unsupported} == {"acme::FancyOp", "com.microsoft::NoSuchContribOp"}
    assert any("com.microsoft::NoSuchContribOp: ONNX Runtime" in a and "has no such contrib op" in a
               for a in report.advice())


def test_unreadable_file(tmp_path):
    path = tmp_path / "truncated.onnx"
    path.write_bytes(mmcv_roi_align().SerializeToString()[:40])
    report = check(path)
    assert report.exit_code == 4 and report.load_error and "not a readable ONNX model" in report.advice()[0]


# The command line, as a deployer runs it.

def run_cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "opbridge", "check", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


def table_rows(out: str) -> list[list[str]]:
    """The rows of the custom-op table (between its header and the blank line)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["domain", "op", "type"])
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(line.split(None, 5))
    return rows


def test_cli_on_a_file_that_runs(tmp_path):
    out = run_cli(save(mmdeploy_detector_tail(), tmp_path / "mmdeploy.onnx"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert table_rows(out.stdout) == [["mmdeploy", "grid_sampler", "1", "opbridge", "GPU", "graph"],
                                      ["mmdeploy", "TRTBatchedNMS", "1", "opbridge", "GPU", "graph"]]
    assert "In a CUDA session (onnxruntime-gpu, a CUDA build of opbridge): all 2 opbridge nodes run on the GPU." in out.stdout
    assert "session with opbridge" in out.stdout and ": created" in out.stdout
    assert ["output", "dets", "tensor(float)", "['batch', 50, 5]"] in [line.split(None, 3) for line in out.stdout.splitlines()]
    assert out.stdout.rstrip().endswith("OK: the model runs in ONNX Runtime with opbridge (exit 0)")


def test_cli_on_an_op_nobody_registers(tmp_path):
    out = run_cli(save(unknown_op(), tmp_path / "acme.onnx"))
    assert out.returncode == 1
    assert table_rows(out.stdout) == [["acme", "FancyOp", "1", "nobody", "-", "graph"]]
    text = " ".join(out.stdout.split())  # the advice is wrapped
    assert "acme::FancyOp is not an opbridge op, and ONNX Runtime does not provide it." in text
    assert "is not a registered function/op" in text  # ORT's error
    assert out.stdout.rstrip().endswith("WILL NOT RUN: ops nobody registers: acme::FancyOp (exit 1)")


def test_cli_on_a_bad_attribute(tmp_path):
    out = run_cli(save(mmcv_roi_align(mode="bogus"), tmp_path / "bad_mode.onnx"))
    assert out.returncode == 3
    assert 'mmcv::MMCVRoiAlign: mode must be "avg" or "max", got "bogus"' in out.stdout
    assert "FAILED" in out.stdout and "(exit 3)" in out.stdout
    # ORT's own logging of the same error is silenced: nothing on stderr but, under Wine (./run.sh's
    # Windows lane), the line ORT's import writes there.
    assert out.stderr.replace("Failed to create DXGI factory.\n", "") == "", out.stderr


def test_cli_json(tmp_path):
    out = run_cli(save(hidden_nodes(), tmp_path / "hidden.onnx"), "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["exit_code"] == 1 and report["ok"] is False
    by_identity = {op["identity"]: op for op in report["custom_ops"]}
    assert by_identity["acme::FancyOp"]["supported"] is False
    assert by_identity["mmcv::grid_sampler"]["where"] == ["function acme.functions::Warp"]
    assert report["advice"] and report["session_error"]


@pytest.mark.parametrize("argv", [["check"], ["check", "a.onnx", "--bogus"]])
def test_cli_usage_errors_exit_2(argv, capsys):
    from opbridge.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
