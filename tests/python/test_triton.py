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


def test_a_value_of_unknown_rank_is_refused_not_written_as_a_scalar(tmp_path):
    """ORT reports an empty shape for a scalar and for an unknown rank alike; only a declared
    scalar is written as one (dims [1] reshaped to [])."""
    nodes = [helper.make_node("grid_sampler", ["input", "grid"], ["output"], domain="mmdeploy", interpolation_mode=0,
                              padding_mode=0, align_corners=0)]
    graph = helper.make_graph(nodes, "unranked", [helper.make_tensor_value_info("input", F, None),
                                                  helper.make_tensor_value_info("grid", F, None)],
                              [helper.make_tensor_value_info("output", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    with pytest.raises(TritonError, match="input 'input' has no known rank"):
        write_entry(_save(model, tmp_path / "unranked.onnx"), tmp_path / "repo")
    assert not (tmp_path / "repo" / "unranked").exists()


def test_force_never_deletes_the_model_it_copies_and_a_failure_keeps_the_old_entry(tmp_path):
    path = _save(mmdeploy_style_model(), tmp_path / "warp.onnx")
    entry = write_entry(path, tmp_path / "repo")
    with pytest.raises(TritonError, match="lies in .* which --force would delete"):
        write_entry(entry.folder / "1" / "model.onnx", tmp_path / "repo", name="warp", force=True)
    assert (entry.folder / "1" / "model.onnx").read_bytes() == path.read_bytes()
    (tmp_path / "repo" / "taken").write_text("a file, not a model folder")
    with pytest.raises(TritonError, match="exists and is not a folder"):
        write_entry(path, tmp_path / "repo", name="taken")
    assert [p.name for p in (tmp_path / "repo").iterdir() if p.name.startswith(".")] == []  # no staging left


def test_external_weights_travel_with_the_model(tmp_path):
    """A model whose initializers live in files beside it (onnx's external data) gets them copied
    into the version folder, where ORT, and so Triton, looks for them."""
    from onnx import numpy_helper

    weight = numpy_helper.from_array(np.linspace(0, 1, 2 * 16 * 16 * 2, dtype=np.float32).reshape(2, 16, 16, 2),
                                     "grid_weights")
    nodes = [helper.make_node("Add", ["grid", "grid_weights"], ["moved"]),
             helper.make_node("grid_sampler", ["input", "moved"], ["output"], domain="mmdeploy", interpolation_mode=0,
                              padding_mode=0, align_corners=0)]
    graph = helper.make_graph(nodes, "weights", [helper.make_tensor_value_info("input", F, [2, 8, 16, 16]),
                                                 helper.make_tensor_value_info("grid", F, [2, 16, 16, 2])],
                              [helper.make_tensor_value_info("output", F, [2, 8, 16, 16])], initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    (tmp_path / "src" / "data").mkdir(parents=True)
    onnx.save(model, str(tmp_path / "src" / "weights.onnx"), save_as_external_data=True,
              location="data/weights.bin", size_threshold=0)
    entry = write_entry(tmp_path / "src" / "weights.onnx", tmp_path / "repo")
    assert (entry.folder / "1" / "data" / "weights.bin").read_bytes() == \
        (tmp_path / "src" / "data" / "weights.bin").read_bytes()
    session = opbridge.create_session(str(entry.folder / "1" / "model.onnx"))
    feeds = {"input": np.ones((2, 8, 16, 16), np.float32), "grid": np.zeros((2, 16, 16, 2), np.float32)}
    expected = opbridge.create_session(str(tmp_path / "src" / "weights.onnx")).run(None, feeds)[0]
    np.testing.assert_array_equal(session.run(None, feeds)[0], expected)
