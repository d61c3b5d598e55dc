"""Axis-aligned NMS through the built library in ORT (opbridge::Nms, opbridge::BatchedNms,
opbridge::MulticlassNms, mmcv::NonMaxSuppression), against torchvision's CPU nms (float32, the
numerics the op follows) and against a reference written from the spec for what torchvision
does not cover (mmcv's offset, the multi-class layout)."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
import torch
import torchvision
from onnx import TensorProto, helper

import opbridge.ops
from box_data import clustered_boxes
from graphs import cast_around, one_node_model, round_to, run, run_error, session_error

f32 = np.float32
INT64 = {"idxs": "int64"}


def nms_model(identity="opbridge::Nms", dtype="float32", **attrs):
    """The node with boxes and scores in `dtype` (bfloat16 behind casts from float32)."""
    inputs = ["boxes", "scores", "idxs"] if identity == "opbridge::BatchedNms" else ["boxes", "scores"]
    model = one_node_model(identity, attrs, inputs, ["selected" if "Multiclass" in identity else "keep"],
                           input_types={**INT64, "boxes": dtype, "scores": dtype})
    return cast_around(model, dtype, {"boxes", "scores"}, set()) if dtype == "bfloat16" else model


def rounded_feeds(feeds, dtype):
    """The float32 feeds rounded to `dtype`, as float32; other feeds as they are."""
    return {name: round_to(value, dtype) if value.dtype == f32 else value for name, value in feeds.items()}


def half_feeds(rounded, dtype):
    """Feeds for nms_model(dtype=dtype) from rounded_feeds: float16 arrays, or the bfloat16 values as
    float32 (which nms_model's casts turn into bfloat16 exactly)."""
    if dtype == "bfloat16":
        return rounded
    return {name: value.astype(np.float16) if value.dtype == f32 else value for name, value in rounded.items()}


def clustered(rng, count, clusters, spread=500.0):
    """Boxes jittered around `clusters` objects (so that many overlap), scores with ties."""
    boxes = clustered_boxes(rng, count, clusters, spread, near_duplicates=False)
    scores = rng.random(count).astype(f32)
    if count:
        scores[::5] = scores[0]  # ties
    return boxes, scores


def torchvision_nms(boxes, scores, threshold):
    return torchvision.ops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), float(threshold)).numpy()


def per_category_reference(boxes, scores, idxs, threshold):
    """torchvision's nms within each category, then all kept in descending score order, ties by
    index (torch.sort stable)."""
    kept = np.zeros(len(scores), bool)
    for c in np.unique(idxs):
        members = np.nonzero(idxs == c)[0]
        kept[members[torchvision_nms(boxes[members], scores[members], threshold)]] = True
    kept = np.nonzero(kept)[0]
    return kept[torch.sort(torch.from_numpy(scores[kept]), descending=True, stable=True)[1].numpy()]


def spec_nms(boxes, scores, threshold, offset):
    """Greedy NMS written from the spec (compat_ops.md 5.5, mmcv's formula with offset) over
    float32 scalars: the classic loop, every kept box testing every later one."""
    order = torch.sort(torch.from_numpy(scores), descending=True, stable=True)[1].numpy()
    off = f32(offset)
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    area = (x2 - x1 + off) * (y2 - y1 + off)
    suppressed = np.zeros(len(scores), bool)
    keep = []
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for a, i in enumerate(order):
            if suppressed[i]:
                continue
            keep.append(i)
            for j in order[a + 1:]:
                if suppressed[j]:
                    continue
                w = max(f32(0), min(x2[i], x2[j]) - max(x1[i], x1[j]) + off)
                h = max(f32(0), min(y2[i], y2[j]) - max(y1[i], y1[j]) + off)
                inter = f32(w * h)
                if inter / f32(area[i] + area[j] - inter) > f32(threshold):
                    suppressed[j] = True
    return np.array(keep, np.int64)


SWEEP = list(itertools.product([0, 1, 2, 10, 47, 48, 300, 3000], [0.0, 0.3, 0.5, 0.7, 1.0]))


@pytest.mark.parametrize("count,threshold", SWEEP)
def test_matches_torchvision(count, threshold):
    rng = np.random.default_rng(count * 10 + int(threshold * 10))
    boxes, scores = clustered(rng, count, count // 8)
    expected = torchvision_nms(boxes, scores, threshold)
    for identity in ["opbridge::Nms", "mmcv::NonMaxSuppression"]:
        (keep,) = run(nms_model(identity, iou_threshold=threshold), {"boxes": boxes, "scores": scores})
        assert keep.dtype == np.int64
        np.testing.assert_array_equal(keep, expected, err_msg=identity)


@pytest.mark.parametrize("count,threshold", [(0, 0.5), (1, 0.5), (40, 0.3), (500, 0.5), (2000, 0.7)])
def test_batched_matches_per_category_torchvision(count, threshold):
    rng = np.random.default_rng(count + 1)
    boxes, scores = clustered(rng, count, count // 5 + 1)
    idxs = rng.integers(-2, 9, count).astype(np.int64)
    expected = per_category_reference(boxes, scores, idxs, threshold)
    feeds = {"boxes": boxes, "scores": scores, "idxs": idxs}
    (keep,) = run(nms_model("opbridge::BatchedNms", iou_threshold=threshold), feeds)
    np.testing.assert_array_equal(keep, expected)
    eager = opbridge.ops.batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(idxs), threshold)
    np.testing.assert_array_equal(eager.numpy(), expected)
    # torchvision's own batched_nms finds the same set (its tie order may differ, see the op page).
    tv = torchvision.ops.batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(idxs), threshold)
    assert sorted(tv.tolist()) == sorted(expected.tolist())


# Either side of the CUDA kernel's mask budget: 46,336 candidates fit its 256 MiB of suppression mask,
# 46,337 take the band path (4,096 candidates at a time against the earlier bands' kept boxes). On
# the CPU these check torchvision at that size; with OPBRIDGE_TEST_CUDA_TWINS=1 (./run.sh test-gpu)
# the GPU session must give the same boxes on both paths, in BatchedNms as one category too.
@pytest.mark.parametrize("count", [46_336, 46_337])
def test_either_side_of_the_gpu_mask_budget(count):
    rng = np.random.default_rng(count)
    boxes, scores = clustered(rng, count, count // 16)
    expected = torchvision_nms(boxes, scores, 0.5)
    (keep,) = run(nms_model("opbridge::Nms", iou_threshold=0.5), {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(keep, expected)
    idxs = np.full(count, 3, np.int64)
    (keep,) = run(nms_model("opbridge::BatchedNms", iou_threshold=0.5), {"boxes": boxes, "scores": scores, "idxs": idxs})
    np.testing.assert_array_equal(keep, expected)


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.6])
def test_offset_one_matches_the_spec(threshold):
    rng = np.random.default_rng(5)
    boxes, scores = clustered(rng, 400, 40, spread=80.0)
    boxes = np.round(boxes)  # mmcv's pixel convention: integer coordinates, where +1 matters most
    for identity in ["opbridge::Nms", "mmcv::NonMaxSuppression"]:
        (keep,) = run(nms_model(identity, iou_threshold=threshold, offset=1), {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(keep, spec_nms(boxes, scores, threshold, 1), err_msg=identity)
    (keep,) = run(nms_model(iou_threshold=threshold, offset=0), {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(keep, spec_nms(boxes, scores, threshold, 0))


def test_edge_values_follow_torchvision():
    """NaN and infinite scores and coordinates, zero-area and inverted boxes: the op computes what
    torchvision computes (such boxes are kept and suppress nothing; NaN scores come first)."""
    nan, inf = f32(np.nan), f32(np.inf)
    boxes = np.array([[0, 0, 4, 4], [0, 0, 4, 4], [nan, 0, 4, 4], [0, 0, inf, 4], [2, 0, 2, 4], [4, 0, 0, 4],
                      [-inf, -inf, inf, inf], [1, 1, 3, 3], [0, 0, 4, 4], [1e30, 1e30, 3e38, 3e38]], f32)
    for scores in [np.array([0.1, nan, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, inf, -inf], f32),
                   np.array([0.5] * 10, f32), np.full(10, nan, f32)]:
        for threshold in [0.0, 0.2, 0.9]:
            (keep,) = run(nms_model(iou_threshold=threshold), {"boxes": boxes, "scores": scores})
            np.testing.assert_array_equal(keep, torchvision_nms(boxes, scores, threshold))


def multiclass_reference(boxes, scores, iou_threshold, score_threshold, limit):
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            candidates = np.nonzero(scores[b, c] > score_threshold)[0]
            keep = candidates[torchvision_nms(boxes[b, candidates], scores[b, c, candidates], iou_threshold)]
            rows += [(b, c, k) for k in (keep if limit < 0 else keep[:limit])]
    return np.array(rows, np.int64).reshape(-1, 3)


@pytest.mark.parametrize("batch,classes,count,limit", [(1, 1, 0, -1), (1, 3, 50, -1), (2, 5, 300, 10), (3, 2, 1, 0),
                                                       (1, 80, 1000, 100)])
def test_multiclass_layout(batch, classes, count, limit):
    rng = np.random.default_rng(batch * 100 + count)
    boxes = np.stack([clustered(rng, count, count // 6 + 1)[0] for _ in range(batch)])
    scores = rng.random((batch, classes, count)).astype(f32)
    if count:
        scores[0, 0, ::3] = 0.25  # exactly the score threshold: not > it, left out
        scores[0, -1, -1] = np.nan
    expected = multiclass_reference(boxes, scores, 0.5, 0.25, limit)
    model = nms_model("opbridge::MulticlassNms", iou_threshold=0.5, score_threshold=0.25,
                      max_output_boxes_per_class=limit)
    (selected,) = run(model, {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(selected, expected)
    eager = opbridge.ops.multiclass_nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.5, 0.25, limit)
    np.testing.assert_array_equal(eager.numpy(), expected)


HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def half_scene(rng, count):
    """Clustered boxes and scores where rounding to half matters: scores packed near 0.5 (rounding
    ties most of them: 3 distinct float16 values, 1 bfloat16), coordinates past 65,504 (infinite in
    float16), NaN scores."""
    boxes, scores = clustered(rng, count, count // 10)
    scores = (0.5 + scores * f32(1e-3)).astype(f32)
    boxes[::97] *= 200
    scores[::101] = np.nan
    return boxes, scores


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("identity", ["opbridge::Nms", "mmcv::NonMaxSuppression", "opbridge::BatchedNms"])
def test_half_keeps_the_float32_ops_boxes_on_the_half_values(identity, dtype):
    """float16 and bfloat16 boxes and scores: exactly the boxes the float32 op keeps on the half values,
    in its order, which are torchvision's under autocast (its nms runs in float32 on the half tensors)."""
    rng = np.random.default_rng(46)
    boxes, scores = half_scene(rng, 3000)
    feeds = {"boxes": boxes, "scores": scores}
    attrs = {"iou_threshold": 0.5, "offset": 1 if identity.startswith("mmcv") else 0}
    if identity == "opbridge::BatchedNms":
        feeds["idxs"] = rng.integers(0, 5, len(scores)).astype(np.int64)
    rounded = rounded_feeds(feeds, dtype)
    (keep,) = run(nms_model(identity, dtype, **attrs), half_feeds(rounded, dtype))
    (exact,) = run(nms_model(identity, **attrs), rounded)
    np.testing.assert_array_equal(keep, exact)
    # The rounding mattered: the unrounded float32 values keep other boxes.
    (unrounded,) = run(nms_model(identity, **attrs), feeds)
    assert not np.array_equal(keep, unrounded)
    if identity == "opbridge::Nms":
        with torch.autocast("cpu", dtype=HALF[dtype]):
            expected = torchvision.ops.nms(torch.from_numpy(rounded["boxes"]).to(HALF[dtype]),
                                           torch.from_numpy(rounded["scores"]).to(HALF[dtype]), 0.5)
        np.testing.assert_array_equal(keep, expected.numpy())
    elif identity == "opbridge::BatchedNms":
        np.testing.assert_array_equal(keep, per_category_reference(rounded["boxes"], rounded["scores"], feeds["idxs"],
                                                                   0.5))
        # The PyTorch op (what a half model's export runs eagerly) takes the half tensors too, and keeps
        # the same boxes.
        eager = opbridge.ops.batched_nms(torch.from_numpy(rounded["boxes"]).to(HALF[dtype]),
                                         torch.from_numpy(rounded["scores"]).to(HALF[dtype]),
                                         torch.from_numpy(feeds["idxs"]), 0.5)
        np.testing.assert_array_equal(keep, eager.numpy())


@pytest.mark.parametrize("dtype", list(HALF))
def test_multiclass_half_keeps_the_float32_ops_rows_on_the_half_values(dtype):
    """The multi-class layout in half: the score filter compares the half scores' floats with the
    float32 threshold (0.25, a half value: scores equal to it are left out)."""
    rng = np.random.default_rng(47)
    boxes = np.stack([half_scene(rng, 400)[0] for _ in range(2)])
    scores = rng.random((2, 3, 400)).astype(f32) * f32(0.5)
    scores[0, 0, ::3] = 0.25
    scores[1, 2, ::7] = np.nan
    feeds = {"boxes": boxes, "scores": scores}
    attrs = {"iou_threshold": 0.5, "score_threshold": 0.25, "max_output_boxes_per_class": 30}
    rounded = rounded_feeds(feeds, dtype)
    (selected,) = run(nms_model("opbridge::MulticlassNms", dtype, **attrs), half_feeds(rounded, dtype))
    (exact,) = run(nms_model("opbridge::MulticlassNms", **attrs), rounded)
    np.testing.assert_array_equal(selected, exact)
    np.testing.assert_array_equal(selected, multiclass_reference(rounded["boxes"], rounded["scores"], 0.5, 0.25, 30))
    eager = opbridge.ops.multiclass_nms(torch.from_numpy(rounded["boxes"]).to(HALF[dtype]),
                                        torch.from_numpy(rounded["scores"]).to(HALF[dtype]), 0.5, 0.25, 30)
    np.testing.assert_array_equal(selected, eager.numpy())


def test_mmcv_graph_as_mmcv_writes_it():
    """mmcv's NMSop.symbolic: mmcv::NonMaxSuppression(boxes, scores) with iou_threshold (float)
    and offset (int), opset 11, IR 6, and a 1-D int64 output."""
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["inds"], domain="mmcv", iou_threshold=0.45,
                            offset=1)
    graph = helper.make_graph([node], "mmcv_nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["N", 4]),
                                                   helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N"])],
                              [helper.make_tensor_value_info("inds", TensorProto.INT64, ["K"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmcv", 1)],
                              ir_version=6)
    onnx.checker.check_model(model)
    rng = np.random.default_rng(9)
    boxes, scores = clustered(rng, 200, 30)
    boxes = np.round(boxes)
    (inds,) = run(model, {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(inds, spec_nms(boxes, scores, 0.45, 1))


@pytest.mark.parametrize("attrs,message", [
    ({"iou_threshold": 1.5}, "opbridge::Nms: iou_threshold must lie in [0, 1], got 1.5"),
    ({"iou_threshold": -0.1}, "opbridge::Nms: iou_threshold must lie in [0, 1], got -0.1"),
    ({"iou_threshold": float("nan")}, "opbridge::Nms: iou_threshold must lie in [0, 1], got nan"),
])
def test_bad_attributes(attrs, message):
    assert message in session_error(nms_model(**attrs))


def test_bad_multiclass_attributes():
    model = nms_model("opbridge::MulticlassNms", iou_threshold=0.5, score_threshold=float("nan"))
    assert "opbridge::MulticlassNms: score_threshold must not be NaN" in session_error(model)
    model = nms_model("opbridge::MulticlassNms", iou_threshold=0.5, max_output_boxes_per_class=-2)
    assert "max_output_boxes_per_class must be -1 (no limit) or >= 0, got -2" in session_error(model)


@pytest.mark.parametrize("identity,feeds,message", [
    ("opbridge::Nms", {"boxes": np.zeros((3, 5), f32), "scores": np.zeros(3, f32)},
     "opbridge::Nms: boxes must have shape [N, 4] (x1, y1, x2, y2), got shape [3, 5]"),
    ("mmcv::NonMaxSuppression", {"boxes": np.zeros((3, 4), f32), "scores": np.zeros(4, f32)},
     "mmcv::NonMaxSuppression: scores must have shape [N] with N = 3 (the number of boxes), got shape [4]"),
    ("opbridge::Nms", {"boxes": np.zeros((3, 4), f32), "scores": np.zeros((3, 1), f32)},
     "scores must have shape [N] with N = 3"),
    ("opbridge::BatchedNms", {"boxes": np.zeros((3, 4), f32), "scores": np.zeros(3, f32), "idxs": np.zeros(2, np.int64)},
     "opbridge::BatchedNms: idxs must have shape [N] with N = 3 (one category per box), got shape [2]"),
    ("opbridge::MulticlassNms", {"boxes": np.zeros((2, 3, 4), f32), "scores": np.zeros((2, 5, 4), f32)},
     "opbridge::MulticlassNms: scores must have shape [B, C, N] with B = 2 and N = 3 (as boxes), got shape [2, 5, 4]"),
    ("opbridge::MulticlassNms", {"boxes": np.zeros((3, 4), f32), "scores": np.zeros((1, 5, 3), f32)},
     "opbridge::MulticlassNms: boxes must have shape [B, N, 4], got shape [3, 4]"),
])
def test_bad_inputs(identity, feeds, message):
    assert message in run_error(nms_model(identity, iou_threshold=0.5), feeds)


@pytest.mark.parametrize("boxes_shape,scores_shape,message", [
    ((1, 0, 4), (1, 2**32, 0), "B * C (1 x 4294967296 from scores [1, 4294967296, 0]) must be at most 2147483647"),
    ((2**31, 0, 4), (2**31, 3, 0), "B * C (2147483648 x 3 from scores [2147483648, 3, 0]) must be at most 2147483647"),
])
def test_multiclass_problem_count_is_bounded_before_allocating(boxes_shape, scores_shape, message):
    """With no boxes the inputs are empty whatever B and C are; one problem per (batch, class)
    was allocated for anyway, and the failed allocation aborted the process (issue 11)."""
    model = one_node_model("opbridge::MulticlassNms", {"iou_threshold": 0.5}, ["boxes", "scores"], ["selected"])
    feeds = {"boxes": np.zeros(boxes_shape, np.float32), "scores": np.zeros(scores_shape, np.float32)}
    assert f"opbridge::MulticlassNms: {message}" in run_error(model, feeds)


def test_multiclass_no_boxes_in_many_problems_is_immediate():
    model = one_node_model("opbridge::MulticlassNms", {"iou_threshold": 0.5}, ["boxes", "scores"], ["selected"])
    feeds = {"boxes": np.zeros((2**24 + 1, 0, 4), np.float32), "scores": np.zeros((2**24 + 1, 17, 0), np.float32)}
    (selected,) = run(model, feeds)
    assert selected.shape == (0, 3) and selected.dtype == np.int64
