"""`opbridge triton`: Triton Inference Server model repository entries. No Triton server runs here;
every configuration is parsed with Triton's own model_config.proto (tests/python/triton_config.py).
torchvision's detectors get their entries in test_detectors.py, from the files opbridge.export wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import opbridge
import triton_config
from conftest import REPO
from opbridge.check import check
from opbridge.triton import TritonError, write_entry

F = TensorProto.FLOAT


def _save(model, path):
    onnx.save(model, str(path))
    return path


def mmdeploy_style_model():
    """What mmdeploy writes for a warp with a dynamic batch: mmdeploy's grid sampler on [batch, 8, 16, 16]
    features, then a standard Relu."""
    nodes = [helper.make_node("grid_sampler", ["input", "grid"], ["sampled"], domain="mmdeploy", interpolation_mode=0,
                              padding_mode=0, align_corners=0),
             helper.make_node("Relu", ["sampled"], ["output"])]
    graph = helper.make_graph(nodes, "warp", [helper.make_tensor_value_info("input", F, ["batch", 8, 16, 16]),
                                              helper.make_tensor_value_info("grid", F, ["batch", 16, 16, 2])],
                              [helper.make_tensor_value_info("output", F, ["batch", 8, 16, 16])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)],
                             ir_version=8)


def test_an_mmdeploy_file_with_a_batch_axis_gets_dynamic_batching(tmp_path):
    path = _save(mmdeploy_style_model(), tmp_path / "warp.onnx")
    entry = write_entry(path, tmp_path / "repo")
    triton_config.check_entry(entry, check(path).values)
    config = triton_config.parse(entry.config)
    assert config.max_batch_size == 8 and config.HasField("dynamic_batching")
    assert list(config.input[0].dims) == [8, 16, 16] and list(config.input[1].dims) == [16, 16, 2]
    assert list(config.model_operations.op_library_filename) == [str(Path(opbridge.library_path()).resolve())]
    assert entry.notes == []
    # The file is copied unchanged, and ORT runs the copy with the library the entry names.
    assert (entry.folder / "1" / "model.onnx").read_bytes() == path.read_bytes()
    session = opbridge.create_session(str(entry.folder / "1" / "model.onnx"))
    x = np.random.default_rng(0).standard_normal((2, 8, 16, 16), dtype=np.float32)
    grid = np.random.default_rng(1).uniform(-1, 1, (2, 16, 16, 2)).astype(np.float32)
    assert session.run(None, {"input": x, "grid": grid})[0].shape == (2, 8, 16, 16)


def test_gpu_instances_and_explicit_settings(tmp_path):
    path = _save(mmdeploy_style_model(), tmp_path / "warp.onnx")
    entry = write_entry(path, tmp_path / "repo", name="warp_gpu", max_batch_size=0, device="gpu", instances=3,
                        library="/opt/opbridge/libopbridge_ort.so")
    config = triton_config.parse(entry.config)
    pb = triton_config.model_config_pb2()
    assert entry.folder == tmp_path / "repo" / "warp_gpu" and config.name == "warp_gpu"
    assert config.max_batch_size == 0 and not config.HasField("dynamic_batching")
    assert list(config.input[0].dims) == [-1, 8, 16, 16]  # no batching: the first axis is a dim like any other
    assert [(g.count, pb.ModelInstanceGroup.Kind.Name(g.kind)) for g in config.instance_group] == [(3, "KIND_GPU")]
    assert list(config.model_operations.op_library_filename) == ["/opt/opbridge/libopbridge_ort.so"]
    assert not config.optimization.HasField("execution_accelerators")  # ORT's accelerators: the backend's defaults


def test_a_model_without_opbridge_nodes_is_refused(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "plain",
                              [helper.make_tensor_value_info("x", F, [1, 4])], [helper.make_tensor_value_info("y", F, [1, 4])])
    path = _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "plain.onnx")
    with pytest.raises(TritonError, match="has no opbridge nodes"):
        write_entry(path, tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def test_a_type_triton_does_not_take_is_named(tmp_path):
    """A sequence input (ORT takes it, Triton's ONNX Runtime backend does not)."""
    seq = helper.make_tensor_sequence_value_info("frames", F, None)
    nodes = [helper.make_node("SequenceAt", ["frames", "zero"], ["input"]),
             helper.make_node("grid_sampler", ["input", "grid"], ["output"], domain="mmdeploy", interpolation_mode=0,
                              padding_mode=0, align_corners=0)]
    graph = helper.make_graph(nodes, "seq", [seq, helper.make_tensor_value_info("grid", F, [1, 4, 4, 2])],
                              [helper.make_tensor_value_info("output", F, None)],
                              initializer=[helper.make_tensor("zero", TensorProto.INT64, [], [0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    with pytest.raises(TritonError, match=r"input 'frames' has type seq\(tensor\(float\)\), which Triton"):
        write_entry(_save(model, tmp_path / "seq.onnx"), tmp_path / "repo")


def test_a_filled_model_folder_needs_force(tmp_path):
    path = _save(mmdeploy_style_model(), tmp_path / "warp.onnx")
    write_entry(path, tmp_path / "repo")
    stale = tmp_path / "repo" / "warp" / "2" / "model.onnx"
    stale.parent.mkdir()
    stale.write_text("an older version")
    with pytest.raises(TritonError, match="exists and is not empty: pass --force"):
        write_entry(path, tmp_path / "repo")
    entry = write_entry(path, tmp_path / "repo", force=True)
    assert not stale.exists() and (entry.folder / "config.pbtxt").is_file()


def test_batching_and_paths_that_cannot_work_are_refused(tmp_path):
    graph = helper.make_graph([helper.make_node("grid_sampler", ["input", "grid"], ["output"], domain="mmdeploy",
                                                interpolation_mode=0, padding_mode=0, align_corners=0)], "fixed",
                              [helper.make_tensor_value_info("input", F, [1, 2, 4, 4]),
                               helper.make_tensor_value_info("grid", F, [1, 4, 4, 2])],
                              [helper.make_tensor_value_info("output", F, [1, 2, 4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    path = _save(model, tmp_path / "fixed.onnx")
    with pytest.raises(TritonError, match="cannot be batched by Triton: the first axis of input 'input' is fixed at 1"):
        write_entry(path, tmp_path / "repo", max_batch_size=4)
    with pytest.raises(TritonError, match="must be an absolute path"):
        write_entry(path, tmp_path / "repo", library="lib/libopbridge_ort.so")
    with pytest.raises(TritonError, match="model name 'a/b'"):
        write_entry(path, tmp_path / "repo", name="a/b")
    entry = write_entry(path, tmp_path / "repo")
    assert entry.max_batch_size == 0 and "first axis of input 'input' is fixed at 1" in entry.notes[0]


def test_the_command_writes_the_entry_and_says_how_to_serve_it(tmp_path):
    path = _save(mmdeploy_style_model(), tmp_path / "warp.onnx")
    run = [sys.executable, "-m", "opbridge", "triton", str(path), "--repository", str(tmp_path / "repo")]
    done = subprocess.run(run + ["--instances", "2"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert f"tritonserver --model-repository {tmp_path / 'repo'}" in done.stdout
    assert triton_config.parse((tmp_path / "repo" / "warp" / "config.pbtxt").read_text()).instance_group[0].count == 2
    again = subprocess.run(run, capture_output=True, text=True, cwd=REPO)
    assert again.returncode == 2 and "opbridge triton:" in again.stderr and "--force" in again.stderr
