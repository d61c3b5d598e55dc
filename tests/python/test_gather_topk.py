"""Gather of top-k rows through the built library in ORT (opbridge::GatherTopk, mmdeploy::GatherTopk),
against a reference written here from the rule (out[a..., g, c...] = data[a..., indices[a..., g],
c...]) and against PyTorch's indexing x[batch_inds, inds, ...] and torch.gather, which mmdeploy's
exporter replaces; the graph mmdeploy writes for TensorRT (TopK, GatherTopk, Reshape)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

from graphs import one_node_model, run, run_error
from opbridge import manifest

IDENTITIES = manifest.load()["gather_topk"].identities
DTYPES = ["float32", "float64", "int32", "int64"]
INDEX_DTYPES = ["int64", "int32"]


def gather_model(identity, data_shape=None, indices_shape=None, dtype="float32", index_dtype="int64"):
    return one_node_model(identity, {}, ["data", "indices"], ["output"],
                          input_shapes={"data": data_shape, "indices": indices_shape},
                          input_types={"data": dtype, "indices": index_dtype})


def run_gather(identity, data, indices, declared=True):
    model = gather_model(identity, list(data.shape) if declared else None, list(indices.shape) if declared else None,
                         str(data.dtype), str(indices.dtype))
    (out,) = run(model, {"data": data, "indices": indices})
    return out


def reference(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The rule, position by position: a negative index counts from the end of the gathered axis."""
    q = indices.ndim
    out = np.empty(indices.shape + data.shape[q:], data.dtype)
    size = data.shape[q - 1]
    for position in np.ndindex(indices.shape):
        i = int(indices[position])
        out[position] = data[position[:-1] + (i + size if i < 0 else i,)]
    return out


def torch_indexing(data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """What mmdeploy's exporter replaces: x[batch_inds, inds, ...] over the leading dims."""
    x, inds = torch.from_numpy(data), torch.from_numpy(indices.astype(np.int64))
    lead = indices.shape[:-1]
    grids = torch.meshgrid(*[torch.arange(n) for n in lead], indexing="ij") if lead else []
    index = tuple(g.reshape(*lead, 1).expand(*indices.shape) for g in grids) + (inds,)
    return x[index].numpy()


def random_case(rng, data_shape, q, picks, dtype, index_dtype, negative=True):
    if np.dtype(dtype).kind == "f":
        data = rng.standard_normal(data_shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, size=data_shape, dtype=dtype, endpoint=True)
    size = data_shape[q - 1]
    low = -size if negative else 0
    indices = rng.integers(low, size, size=tuple(data_shape[:q - 1]) + (picks,)).astype(index_dtype)
    return data, indices


def assert_bitwise(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual.view(f"u{actual.itemsize}"), expected.view(f"u{expected.itemsize}"))


# (data shape, indices rank, picks)
CASES = [((7,), 1, 3), ((7, 3), 1, 5), ((2, 10, 4), 2, 3), ((2, 10), 2, 10), ((1, 1, 1), 2, 1), ((3, 20, 80), 2, 12),
         ((2, 3, 9, 4, 2), 3, 5), ((2, 3, 9), 3, 4), ((2, 50, 3), 2, 200)]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dtype,index_dtype", list(itertools.product(DTYPES, INDEX_DTYPES)))
def test_matches_reference_and_torch_indexing(identity, dtype, index_dtype):
    rng = np.random.default_rng(DTYPES.index(dtype) * 2 + INDEX_DTYPES.index(index_dtype))
    for data_shape, q, picks in CASES:
        data, indices = random_case(rng, data_shape, q, picks, dtype, index_dtype)
        out = run_gather(identity, data, indices)
        assert_bitwise(out, reference(data, indices))
        assert_bitwise(out, torch_indexing(data, indices))
        if q > 1 and dtype == index_dtype:  # unknown ranks at session creation: the same result
            assert_bitwise(run_gather(identity, data, indices, declared=False), out)


def test_matches_torch_gather_for_nonnegative_indices():
    """torch.gather along the axis with the index broadcast over the trailing dims gives the same."""
    rng = np.random.default_rng(5)
    data, indices = random_case(rng, (4, 30, 6), 2, 9, "float32", "int64", negative=False)
    expected = torch.gather(torch.from_numpy(data), 1, torch.from_numpy(indices)[..., None].expand(4, 9, 6)).numpy()
    assert_bitwise(run_gather("mmdeploy::GatherTopk", data, indices), expected)


def test_symbolic_dims_type_the_output_and_an_unknown_rank_is_an_error():
    """ORT types the output like indices unless shape inference (which needs data's rank) types it."""
    data = np.random.default_rng(6).standard_normal((2, 9, 3)).astype(np.float32)
    indices = np.array([[1, 2], [0, -1]], np.int64)
    model = gather_model("mmdeploy::GatherTopk", ["b", "n", 3], ["b", "k"])
    (out,) = run(model, {"data": data, "indices": indices})
    assert_bitwise(out, reference(data, indices))
    error = run_error(gather_model("mmdeploy::GatherTopk"), {"data": data, "indices": indices})
    assert ("mmdeploy::GatherTopk: ORT typed the output int64 where data is float32: it does so when data's rank is "
            "unknown at session creation; give the model's data input a shape") in error


def test_special_values_are_copied_bit_for_bit():
    data = np.array([[np.nan, -0.0, np.inf, -np.inf, 1e-45, np.float32(3.4e38)]], np.float32)
    data.view(np.uint32)[0, 0] = 0x7FC12345  # a NaN with a payload
    indices = np.array([[0, 1, 2, 3, 4, 5, -6, 0]], np.int64)
    assert_bitwise(run_gather("opbridge::GatherTopk", data, indices), reference(data, indices))


def test_gathers_of_several_tasks_match_the_reference():
    """Gathers large enough to be dealt in several tasks (chunks of 256K elements) and one that is not.
    (test_conformance.py runs them at 1, 2 and 4 threads.)"""
    rng = np.random.default_rng(9)
    for data_shape, picks in (((2, 20000, 80), 4000), ((2, 20000, 4), 1000), ((8, 50000), 40000)):
        data, indices = random_case(rng, data_shape, 2, picks, "float32", "int64")
        assert_bitwise(run_gather("mmdeploy::GatherTopk", data, indices), reference(data, indices))


def test_mmdeploy_graph_as_mmdeploy_writes_it():
    """mmdet's post-processing exported by mmdeploy for TensorRT: TopK over the scores, then
    GatherTopk(x, inds) for boxes and scores, each followed by the Reshape the rewrite adds."""
    B, N, C, K = 2, 300, 5, 40
    k = helper.make_tensor("k", TensorProto.INT64, [1], [K])
    box_shape = helper.make_tensor("box_shape", TensorProto.INT64, [3], [B, K, 4])
    score_shape = helper.make_tensor("score_shape", TensorProto.INT64, [3], [B, K, C])
    nodes = [
        helper.make_node("ReduceMax", ["scores"], ["max_scores"], axes=[2], keepdims=0),
        helper.make_node("TopK", ["max_scores", "k"], ["top", "inds"], axis=1),
        helper.make_node("GatherTopk", ["bboxes", "inds"], ["g_boxes"], domain="mmdeploy"),
        helper.make_node("Reshape", ["g_boxes", "box_shape"], ["out_boxes"]),
        helper.make_node("GatherTopk", ["scores", "inds"], ["g_scores"], domain="mmdeploy"),
        helper.make_node("Reshape", ["g_scores", "score_shape"], ["out_scores"]),
    ]
    graph = helper.make_graph(
        nodes, "mmdeploy_gather_topk",
        [helper.make_tensor_value_info("bboxes", TensorProto.FLOAT, [B, N, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [B, N, C])],
        [helper.make_tensor_value_info("out_boxes", TensorProto.FLOAT, [B, K, 4]),
         helper.make_tensor_value_info("out_scores", TensorProto.FLOAT, [B, K, C])],
        initializer=[k, box_shape, score_shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    rng = np.random.default_rng(3)
    bboxes = rng.uniform(0, 800, (B, N, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (B, N, C)).astype(np.float32)
    out_boxes, out_scores = run(model, {"bboxes": bboxes, "scores": scores})
    x, s = torch.from_numpy(bboxes), torch.from_numpy(scores)
    _, inds = s.max(-1)[0].topk(K)
    batch_inds = torch.arange(B).unsqueeze(-1)
    np.testing.assert_array_equal(out_boxes, x[batch_inds, inds, ...].numpy())
    np.testing.assert_array_equal(out_scores, s[batch_inds, inds, ...].numpy())


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("indices,message", [
    ([[0, 4], [1, 2]], "indices[0, 1] = 4 is out of range for data's axis 1 of size 4: an index must be in [-4, 3] "
                       "(a negative one counts from the end, as in PyTorch's indexing)"),
    ([[0, 1], [-5, 2]], "indices[1, 0] = -5 is out of range for data's axis 1 of size 4: an index must be in [-4, 3]"),
])
def test_index_out_of_range_is_an_error(identity, index_dtype, indices, message):
    data = np.zeros((2, 4, 3), np.float32)
    model = gather_model(identity, [2, 4, 3], [2, 2], "float32", index_dtype)
    assert f"{identity}: {message}" in run_error(model, {"data": data, "indices": np.array(indices, index_dtype)})


def test_torch_raises_on_the_same_index():
    """The rule matches PyTorch's: the index the op refuses is one torch refuses too."""
    x = torch.zeros(2, 4, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[torch.arange(2).unsqueeze(-1), torch.tensor([[0, 4], [1, 2]])]
    x[torch.arange(2).unsqueeze(-1), torch.tensor([[0, -4], [1, 2]])]  # -4 is taken


def test_picking_from_an_empty_axis_is_an_error():
    model = gather_model("opbridge::GatherTopk", [2, 0, 3], [2, 1])
    error = run_error(model, {"data": np.zeros((2, 0, 3), np.float32), "indices": np.zeros((2, 1), np.int64)})
    assert "opbridge::GatherTopk: indices[0, 0] = 0 picks from data's axis 1, which has size 0 (nothing to gather)" in error


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("data_shape,indices_shape,message", [
    ((2, 4, 3), (), "indices must have rank >= 1 [A..., G1] (the picks of each leading position), got a scalar"),
    ((4,), (1, 2), "data must have at least indices' rank 2 ([A..., G0, C...] for indices [A..., G1]), got data [4] "
                   "and indices [1, 2]"),
    ((2, 4, 3), (3, 2), "data and indices must have the same leading dims (all of indices' but its last): dim 0 is 2 "
                        "in data [2, 4, 3] and 3 in indices [3, 2]"),
    ((2, 5, 4, 3), (2, 4, 2), "data and indices must have the same leading dims (all of indices' but its last): "
                              "dim 1 is 5 in data [2, 5, 4, 3] and 4 in indices [2, 4, 2]"),
])
def test_shape_errors(identity, data_shape, indices_shape, message):
    model = gather_model(identity)
    error = run_error(model, {"data": np.zeros(data_shape, np.float32), "indices": np.zeros(indices_shape, np.int64)})
    assert f"{identity}: {message}" in error
