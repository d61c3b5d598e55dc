"""The GPU plumbing that runs without a GPU: the comparisons of the CUDA twin check (cuda_twins.py,
run by ./run.sh test-gpu) and the placement report (opbridge.placement) on made-up outputs, errors
and partitioned graphs (a check that cannot fail would pass every GPU run), and what the bench's
GPU mode runs and says where it cannot."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import cuda_twins
from graphs import one_node_model
from opbridge import tolerances
from opbridge.placement import copies_next_to_opbridge_nodes


def test_cuda_kernels_of_a_model():
    assert cuda_twins.cuda_kernels(one_node_model("mmcv::MMCVRoiAlign", {}, ["x", "r"], ["y"])) == ["roi_align"]
    assert cuda_twins.cuda_kernels(one_node_model("mmcv::SoftNonMaxSuppression", {}, ["b", "s"], ["d", "i"])) == [
        "soft_nms"]
    assert cuda_twins.cuda_kernels(one_node_model("other::SoftNonMaxSuppression", {}, ["b", "s"], ["d", "i"])) == []
    assert cuda_twins.cuda_kernels(one_node_model("::Relu", {}, ["x"], ["y"])) == []


def test_outputs_must_be_bit_identical_except_where_the_table_allows(monkeypatch):
    a = np.array([1.0, np.nan, -0.0], np.float32)
    cuda_twins.compare_outputs("grid_sample", [a], [a.copy()])
    with pytest.raises(AssertionError, match="CUDA differs"):
        cuda_twins.compare_outputs("grid_sample", [a], [np.nextafter(a, np.float32(2))])
    with pytest.raises(AssertionError, match="CUDA differs"):  # -0 against +0 is a difference
        cuda_twins.compare_outputs("grid_sample", [a], [np.array([1.0, np.nan, 0.0], np.float32)])
    # A NaN's sign and payload are not: x86 makes new NaNs negative (0xffc00000), a GPU positive
    # (0x7fffffff), and IEEE 754 leaves both unspecified.
    cuda_twins.compare_outputs("grid_sample", [a], [np.array([1.0, -np.nan, -0.0], np.float32)])
    # Every kernel is exact today (RoIAlign's avg mode too: its GPU kernel sums as the CPU kernel does).
    b = np.array([1.0, 2.0], np.float32)
    with pytest.raises(AssertionError, match="CUDA differs"):
        cuda_twins.compare_outputs("roi_align", [b], [b * np.float32(1 + 2e-7)])
    # A table entry that allows float32 rounding is honoured; NaN places must still match.
    monkeypatch.setitem(tolerances.TOLERANCES, ("roi_align", "cuda_twin", "float32"),
                        tolerances.Tolerance(1e-5, 1e-6, "a summation order"))
    cuda_twins.compare_outputs("roi_align", [b], [b * np.float32(1 + 2e-7)])
    with pytest.raises(AssertionError):
        cuda_twins.compare_outputs("roi_align", [b], [b * np.float32(1.001)])
    with pytest.raises(AssertionError, match="NaN"):
        cuda_twins.compare_outputs("roi_align", [b], [np.array([1.0, np.nan], np.float32)])
    with pytest.raises(AssertionError, match="int64"):
        cuda_twins.compare_outputs("nms", [np.array([0, 1])], [np.array([0.0, 1.0], np.float32)])
    with pytest.raises(AssertionError, match="outputs"):
        cuda_twins.compare_outputs("nms", [np.array([0])], [])


def test_errors_must_match_word_for_word_or_be_the_defined_nan():
    cpu = "[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running RoiAlign node. Name:'n' " \
          "Status Message: opbridge::RoiAlign: rois[1, 0] (batch index 2) must lie in (-1, 1)"
    cuda = cpu.replace("Non-zero status code", "Non-zero status code (CUDA)")
    cuda_twins.compare_errors("roi_align", cpu, cuda, None)
    with pytest.raises(AssertionError, match="differs"):
        cuda_twins.compare_errors("roi_align", cpu, cuda.replace("(-1, 1)", "(-1, 2)"), None)
    cuda_twins.compare_errors("roi_align", cpu, None, [np.array([np.nan], np.float32)])
    with pytest.raises(AssertionError, match="NaN"):
        cuda_twins.compare_errors("roi_align", cpu, None, [np.array([0.0], np.float32)])
    with pytest.raises(AssertionError, match="ran"):  # no defined result: the CUDA op must fail too
        cuda_twins.compare_errors("nms", cpu, None, [np.array([0])])
    # GatherTopk: an index out of range gives all-ones words, NaN in float data and -1 in integer data.
    cuda_twins.compare_errors("gather_topk", cpu, None, [np.array([1.0, np.nan], np.float32)])
    cuda_twins.compare_errors("gather_topk", cpu, None, [np.array([[3, -1]], np.int64)])
    cuda_twins.compare_errors("gather_topk", cpu, None, [np.zeros((2, 1, 0), np.float32)])
    with pytest.raises(AssertionError, match="all-ones"):
        cuda_twins.compare_errors("gather_topk", cpu, None, [np.array([[3, 4]], np.int32)])


def _partitioned(nodes):
    graph = helper.make_graph(nodes, "partitioned", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph)


def test_placement_finds_opbridge_nodes_next_to_copies():
    copied_out = _partitioned([helper.make_node("Relu", ["x"], ["a"]),
                           helper.make_node("RoiAlign", ["a", "r"], ["b"], domain="opbridge", name="pool"),
                           helper.make_node("MemcpyToHost", ["b"], ["c"]),
                           helper.make_node("Shape", ["c"], ["y"])])
    # The pooled output is copied to the host for a CPU node: a copy next to an opbridge node.
    report = copies_next_to_opbridge_nodes(copied_out)
    assert (report.memcpy_nodes, report.opbridge_nodes) == (1, 1)
    assert report.opbridge_nodes_next_to_copies == ["opbridge::RoiAlign 'pool'"]
    clean = _partitioned([helper.make_node("MemcpyFromHost", ["x"], ["a"]),
                          helper.make_node("Relu", ["a"], ["b"]),
                          helper.make_node("RoiAlign", ["b", "r"], ["y"], domain="opbridge")])
    report = copies_next_to_opbridge_nodes(clean)
    assert report.all_opbridge_nodes_on_gpu and report.memcpy_nodes == 1
    fallback = _partitioned([helper.make_node("MemcpyToHost", ["x"], ["a"]),
                             helper.make_node("SoftNonMaxSuppression", ["a", "s"], ["b", "i"], domain="opbridge",
                                              name="soft"),
                             helper.make_node("MemcpyFromHost", ["b"], ["y"])])
    assert copies_next_to_opbridge_nodes(fallback).opbridge_nodes_next_to_copies == [
        "opbridge::SoftNonMaxSuppression 'soft'"]


def test_bench_on_the_gpu_runs_the_cuda_ops_workloads_or_says_what_is_missing(monkeypatch, capsys):
    import onnxruntime

    from opbridge import bench

    workloads = bench.cuda_workloads()
    for expected in ("roi_align.box", "grid_sample.warp", "nms.single", "nms.batched", "detector.fasterrcnn",
                     "dcn.large", "attention.detr", "cummax.rows", "inverse", "model.dcn_block",
                     "model.deformable_detr_layer"):
        assert expected in workloads
    assert "roi_align_rotated" in workloads
    assert "nms_rotated" in workloads
    assert "nms_match" in workloads
    assert "soft_nms.dense" in workloads
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert bench.main(["roi_align.mask"], 1, [1], device="cuda") == 2
    assert "has no CUDA execution provider: install onnxruntime-gpu" in capsys.readouterr().err
