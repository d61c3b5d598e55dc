"""TensorRT batched NMS through the built library in ORT (opbridge::TrtBatchedNms,
opbridge::TrtBatchedRotatedNms, mmdeploy::TRTBatchedNMS, mmdeploy::TRTBatchedRotatedNMS) and the
eager PyTorch ops (opbridge.ops.trt_batched_nms, trt_batched_rotated_nms), against a reference
written here from the plugin's code (its jaccardOverlap in float32 scalars, its per-class greedy
loop, the merge) and, for rotated boxes, the float64 geometry of rotated_reference.py; export
round trips with both exporters and compat="mmdeploy". Labels and indices are compared exactly,
dets exactly (they are copies of inputs)."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
import opbridge.ops
import rotated_reference
from box_data import clustered_boxes
from graphs import EXPORTERS, cast_around, one_node_model, round_to, run, run_error, session_error
from opbridge import manifest
from opbridge.export import custom_nodes

f32 = np.float32
NAN, INF = float("nan"), float("inf")
TRT_NMS = manifest.load()["trt_batched_nms"]
# The identities of boxes [B, S, L, 4] and of rotated boxes [B, S, L, 5].
AXIS_ALIGNED = [i for i in TRT_NMS.identities if TRT_NMS.signature(i).inputs[0].shape.endswith("4]")]
ROTATED = [i for i in TRT_NMS.identities if TRT_NMS.signature(i).inputs[0].shape.endswith("5]")]


def attrs_of(num_classes, keep_topk, iou, score=0.0, topk=-1, background=-1, clip=0, **more):
    """Attributes as mmdeploy's exporter writes them (every one present)."""
    return dict(background_label_id=background, num_classes=num_classes, topk=topk, keep_topk=keep_topk,
                score_threshold=score, iou_threshold=iou, is_normalized=0, clip_boxes=clip, **more)


def nms_model(identity, attrs, with_index=False):
    outputs = ["dets", "labels"] + (["index"] if with_index else [])
    return one_node_model(identity, attrs, ["boxes", "scores"], outputs)


def run_nms(identity, boxes, scores, **attrs):
    """dets, labels and (axis-aligned identities) index, as ORT computes them."""
    with_index = identity in AXIS_ALIGNED
    if with_index and identity.startswith("mmdeploy"):
        attrs["return_index"] = 1
    outputs = run(nms_model(identity, attrs_of(**attrs), with_index), {"boxes": boxes, "scores": scores})
    batch, keep = boxes.shape[0], attrs["keep_topk"]
    assert outputs[0].dtype == np.float32 and outputs[0].shape == (batch, keep, boxes.shape[3] + 1)
    for rows in outputs[1:]:
        assert rows.dtype == np.int32 and rows.shape == (batch, keep)
    return outputs


# --- the reference ---------------------------------------------------------------------------------


def jaccard_overlap(a, b):
    """The plugin's jaccardOverlap with offset 0, in float32 scalars (CUDA's min and max return
    the number when one side is NaN: np.fmin, np.fmax)."""
    a, b = [f32(v) for v in a], [f32(v) for v in b]
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return f32(0)
    width = np.fmin(a[2], b[2]) - np.fmax(a[0], b[0])
    height = np.fmin(a[3], b[3]) - np.fmax(a[1], b[1])
    if not (width > 0 and height > 0):
        return f32(0)

    def size(x):
        return f32(0) if x[2] < x[0] or x[3] < x[1] else (x[2] - x[0]) * (x[3] - x[1])

    inter = width * height
    with np.errstate(all="ignore"):
        return inter / (size(a) + size(b) - inter)


def reference(boxes, scores, keep_topk, iou, score=0.0, topk=-1, background=-1, clip=0):
    """dets, labels, index from the plugin's pipeline; rotated when boxes have 5 values."""
    batch, count, loc_classes, box_size = boxes.shape
    classes = scores.shape[2]
    take = topk if 0 < topk <= count else count
    dets = np.zeros((batch, keep_topk, box_size + 1), f32)
    labels = np.full((batch, keep_topk), -1, np.int32)
    index = np.full((batch, keep_topk), -1, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            if c == background:
                continue
            own = boxes[b, :, 0 if loc_classes == 1 else c]
            candidates = [s for s in range(count) if scores[b, s, c] > f32(score)]
            order = sorted(candidates, key=lambda s: (-scores[b, s, c], s))[:take]
            if box_size == 5:
                kept = rotated_reference.greedy_nms_rotated(own[order], scores[b, order, c], iou).tolist()
            else:
                kept = []
                for k in range(len(order)):
                    if not any(jaccard_overlap(own[order[i]], own[order[k]]) > f32(iou) for i in kept):
                        kept.append(k)
            found += [(-scores[b, order[k], c], c, rank, order[k]) for rank, k in enumerate(kept)]
        for r, (neg_score, c, _, s) in enumerate(sorted(found)[:keep_topk]):
            box = boxes[b, s, 0 if loc_classes == 1 else c]
            dets[b, r, :box_size] = np.clip(np.nan_to_num(box, nan=1.0), 0, 1) if clip else box
            dets[b, r, box_size] = -neg_score
            labels[b, r] = c
            index[b, r] = s if loc_classes == 1 else c * count + s
    return dets, labels, index


def problem(rng, batch, count, classes, loc_classes=1, rotated=False):
    """boxes [batch, count, loc_classes, 4 or 5], scores [batch, count, classes] with ties (every
    5th score equal to the first) and a detector's spread (one likely class per box)."""
    if rotated:
        xyxy = clustered_boxes(rng, batch * count * loc_classes, max(count // 6, 1))
        ctr, wh = (xyxy[:, :2] + xyxy[:, 2:]) / 2, xyxy[:, 2:] - xyxy[:, :2]
        theta = rng.uniform(-math.pi, math.pi, len(xyxy))  # independent angles: mmcv's IoU is exact there
        boxes = np.column_stack([ctr, wh, theta]).astype(f32).reshape(batch, count, loc_classes, 5)
    else:
        boxes = np.stack([clustered_boxes(rng, count * loc_classes, max(count // 6, 1)) for _ in range(batch)])
        boxes = boxes.reshape(batch, count, loc_classes, 4)
    scores = rng.exponential(0.1, (batch, count, classes))
    scores[:, np.arange(count), rng.integers(0, classes, count)] = rng.uniform(0, 1, (batch, count))
    scores = np.minimum(scores, 1).astype(f32)
    if count:
        scores[:, ::5] = scores[:, :1]
    return boxes, scores


def test_reference_hand_worked():
    """The reference on the C++ test's hand-worked pipeline (tests/cpp/trt_batched_nms_test.cc)."""
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [0, 1, 10, 11], [50, 50, 60, 60]], f32).reshape(1, 4, 1, 4)
    scores = np.array([[0.9, 0.1], [0.8, 0.7], [0.3, 0.6], [0.5, 0.05]], f32)[None]
    dets, labels, index = reference(boxes, scores, 6, 0.5, 0.2)
    np.testing.assert_array_equal(labels, [[0, 1, 0, -1, -1, -1]])
    np.testing.assert_array_equal(index, [[0, 1, 3, -1, -1, -1]])
    np.testing.assert_array_equal(dets[0, :3, 4], f32([0.9, 0.7, 0.5]))
    assert not dets[0, 3:].any()


# --- the kernel against the reference --------------------------------------------------------------

CASES = [
    # batch, count, classes, loc_classes, keep_topk, iou, score, topk, background
    (1, 0, 3, 1, 5, 0.5, 0.0, -1, -1),
    (1, 1, 1, 1, 3, 0.5, 0.0, -1, -1),
    (2, 40, 3, 1, 20, 0.5, 0.05, -1, -1),
    (2, 40, 3, 3, 20, 0.5, 0.05, -1, -1),
    (1, 120, 4, 1, 50, 0.0, 0.1, -1, 0),
    (1, 120, 4, 4, 50, 0.3, 0.1, 30, 2),
    (2, 200, 2, 1, 100, 0.7, 0.0, 64, -1),
    (1, 200, 5, 1, 500, 1.0, 0.2, 300, -1),
    (3, 60, 2, 2, 7, 0.45, 0.3, 10, 1),
]


@pytest.mark.parametrize("identity", AXIS_ALIGNED)
@pytest.mark.parametrize("case", CASES)
def test_matches_reference(identity, case):
    batch, count, classes, loc, keep, iou, score, topk, background = case
    boxes, scores = problem(np.random.default_rng(count + classes + loc), batch, count, classes, loc)
    expected = reference(boxes, scores, keep, iou, score, topk, background)
    if count >= 40:
        assert (expected[1] >= 0).sum() >= min(keep, 10) * batch // 2
    actual = run_nms(identity, boxes, scores, num_classes=classes, keep_topk=keep, iou=iou, score=score, topk=topk,
                     background=background)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("identity", ROTATED)
@pytest.mark.parametrize("case", [c for c in CASES if c[1] <= 120])
def test_rotated_matches_the_float64_reference(identity, case):
    batch, count, classes, loc, keep, iou, score, topk, background = case
    boxes, scores = problem(np.random.default_rng(count + classes), batch, count, classes, loc, rotated=True)
    expected = reference(boxes, scores, keep, iou, score, topk, background)
    actual = run_nms(identity, boxes, scores, num_classes=classes, keep_topk=keep, iou=iou, score=score, topk=topk,
                     background=background)
    for a, e in zip(actual, expected[:2]):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", TRT_NMS.identities)
def test_half_is_the_float32_ops_detections_on_the_half_values(identity, dtype):
    """float16 and bfloat16 boxes and scores, dets of the same dtype: exactly the float32 op's dets,
    labels and index on the half values (every box value and score written back as it was read),
    which differ from those on the unrounded values (scores packed near 0.5 tie when rounded)."""
    rng = np.random.default_rng(50)
    boxes, scores = problem(rng, 2, 400, 4, rotated=identity in ROTATED)
    scores[:, ::2] = f32(0.5) + scores[:, ::2] * f32(1e-3)
    attrs = attrs_of(4, 500, 0.45, 0.2, clip=0)
    with_index = identity in AXIS_ALIGNED
    if with_index and identity.startswith("mmdeploy"):
        attrs["return_index"] = 1
    outputs = ["dets", "labels"] + (["index"] if with_index else [])
    model = one_node_model(identity, attrs, ["boxes", "scores"], outputs, input_types={"boxes": dtype, "scores": dtype})
    rounded = {"boxes": round_to(boxes, dtype), "scores": round_to(scores, dtype)}
    if dtype == "bfloat16":
        got = run(cast_around(model, dtype, {"boxes", "scores"}, {"dets"}), rounded)
    else:
        got = run(model, {n: v.astype(np.float16) for n, v in rounded.items()})
        assert got[0].dtype == np.float16
    exact = run(nms_model(identity, attrs, with_index), rounded)
    np.testing.assert_array_equal(got[0].astype(f32), exact[0])
    for g, e in zip(got[1:], exact[1:]):
        np.testing.assert_array_equal(g, e)
    # Not merely the unrounded detections rounded: other boxes, or another order.
    unrounded = run(nms_model(identity, attrs, with_index), {"boxes": boxes, "scores": scores})
    assert not (np.array_equal(got[1], unrounded[1]) and np.array_equal(got[0].astype(f32), round_to(unrounded[0], dtype)))


def test_clip_boxes_and_its_default():
    """clip_boxes clamps every box value (NaN -> 1) to [0, 1], not the score; absent, it is 1."""
    boxes = np.array([[-0.5, 0.25, 1.5, NAN]], f32).reshape(1, 1, 1, 4)
    scores = np.array([[[2.0]]], f32)
    dets, _, _ = run_nms("opbridge::TrtBatchedNms", boxes, scores, num_classes=1, keep_topk=1, iou=0.5, clip=1)
    np.testing.assert_array_equal(dets, [[[0, 0.25, 1, 1, 2]]])
    model = nms_model("mmdeploy::TRTBatchedNMS", {"num_classes": 1, "keep_topk": 1, "background_label_id": -1})
    dets, labels = run(model, {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(dets, [[[0, 0.25, 1, 1, 2]]])
    rotated = np.array([[3, -1, 0.5, 2, -0.3]], f32).reshape(1, 1, 1, 5)
    model = nms_model("mmdeploy::TRTBatchedRotatedNMS", {"num_classes": 1, "keep_topk": 1, "background_label_id": -1})
    dets, labels = run(model, {"boxes": rotated, "scores": scores})
    np.testing.assert_array_equal(dets, [[[1, 0, 0.5, 1, 0, 2]]])


def test_absent_attributes_take_the_plugins_defaults():
    """background_label_id 0 (class 0 gives nothing), topk 0 (all), thresholds 0, clip_boxes 1."""
    boxes, scores = problem(np.random.default_rng(7), 1, 30, 3)
    boxes = boxes / 300
    model = nms_model("mmdeploy::TRTBatchedNMS", {"num_classes": 3, "keep_topk": 30})
    actual = run(model, {"boxes": boxes, "scores": scores})
    expected = reference(boxes, scores, 30, 0.0, 0.0, -1, 0, clip=1)
    assert (boxes < 0).any() and (boxes > 1).any()
    assert (expected[1] == 1).any() and not (expected[1] == 0).any()
    for a, e in zip(actual, expected[:2]):
        np.testing.assert_array_equal(a, e)


def test_keep_topk_above_topk_pads_with_empty_rows():
    """The plugin writes nothing (uninitialised outputs) when keep_topk > topk; opbridge writes the
    detections found and empty rows."""
    boxes, scores = problem(np.random.default_rng(8), 1, 20, 2)
    dets, labels, index = run_nms("opbridge::TrtBatchedNms", boxes, scores, num_classes=2, keep_topk=100, iou=0.5,
                                  topk=5)
    found = (labels >= 0).sum()
    assert 0 < found <= 10
    assert (labels[0, found:] == -1).all() and (index[0, found:] == -1).all() and not dets[0, found:].any()
    np.testing.assert_array_equal(labels, reference(boxes, scores, 100, 0.5, 0.0, 5)[1])


def test_negative_score_threshold_takes_every_score_above_it():
    """The plugin mishandles score_threshold < 0 (cleared zeros sort before valid negative scores);
    opbridge takes the scores above the threshold in score order."""
    boxes = np.array([[0, 0, 1, 1], [5, 5, 6, 6], [10, 10, 11, 11]], f32).reshape(1, 3, 1, 4)
    scores = np.array([-0.5, -2.0, -0.1], f32).reshape(1, 3, 1)
    dets, labels, index = run_nms("opbridge::TrtBatchedNms", boxes, scores, num_classes=1, keep_topk=3, iou=0.5,
                                  score=-1.0)
    np.testing.assert_array_equal(index, [[2, 0, -1]])
    np.testing.assert_array_equal(dets[0, :, 4], f32([-0.1, -0.5, 0]))


def test_nan_scores_and_boxes():
    """A NaN score is never a candidate; a box with a NaN value suppresses nothing and is not
    suppressed (its IoU is NaN)."""
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, NAN], [0, 0, 10, 10], [1, 1, 10, 10]], f32).reshape(1, 4, 1, 4)
    scores = np.array([0.5, 0.9, NAN, 0.4], f32).reshape(1, 4, 1)
    _, labels, index = run_nms("opbridge::TrtBatchedNms", boxes, scores, num_classes=1, keep_topk=4, iou=0.5)
    np.testing.assert_array_equal(index, [[1, 0, -1, -1]])
    np.testing.assert_array_equal(index, reference(boxes, scores, 4, 0.5)[2])


def test_mmdeploy_graphs_as_mmdeploy_writes_them():
    """TRTBatchedNMSop.symbolic: mmdeploy::TRTBatchedNMS(boxes [B, S, 1, 4], scores [B, S, C]) with
    every attribute (background_label_id -1, is_normalized 0, clip_boxes 0, return_index), outputs
    dets, labels (and index), opset 11; TRTBatchedRotatedNMSop likewise without return_index."""
    rng = np.random.default_rng(9)
    for identity, box_size, with_index in [("TRTBatchedNMS", 4, False), ("TRTBatchedNMS", 4, True),
                                           ("TRTBatchedRotatedNMS", 5, False)]:
        boxes, scores = problem(rng, 2, 80, 3, 1, rotated=box_size == 5)
        attrs = attrs_of(3, 50, 0.5, 0.05, 60)
        if box_size == 4:
            attrs["return_index"] = int(with_index)
        outputs = ["dets", "labels"] + (["index"] if with_index else [])
        node = helper.make_node(identity, ["boxes", "scores"], outputs, domain="mmdeploy", **attrs)
        graph = helper.make_graph(
            [node], "mmdeploy_trt_batched_nms",
            [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", "num_boxes", 1, box_size]),
             helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", "num_boxes", 3])],
            [helper.make_tensor_value_info("dets", TensorProto.FLOAT, ["batch", 50, box_size + 1]),
             helper.make_tensor_value_info("labels", TensorProto.INT32, ["batch", 50])]
            + ([helper.make_tensor_value_info("index", TensorProto.INT32, ["batch", 50])] if with_index else []))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)],
                                  ir_version=7)
        onnx.checker.check_model(model)
        actual = run(model, {"boxes": boxes, "scores": scores})
        expected = reference(boxes, scores, 50, 0.5, 0.05, 60)
        assert len(actual) == len(outputs) and (expected[1] >= 0).sum() > 20
        for a, e in zip(actual, expected[:len(actual)] if box_size == 4 else expected[:2]):
            np.testing.assert_array_equal(a, e)


# --- errors -------------------------------------------------------------------------------------------

Z = np.zeros


@pytest.mark.parametrize("identity", AXIS_ALIGNED + ROTATED)
@pytest.mark.parametrize("change,message", [
    ({"num_classes": 0}, "num_classes must be >= 1, got 0"),
    ({"keep_topk": -1}, "keep_topk must lie in [0, 2147483647] (detections per image), got -1"),
    ({"keep_topk": 2 ** 31}, "keep_topk must lie in [0, 2147483647] (detections per image), got 2147483648"),
    ({"background_label_id": -2}, "background_label_id must be -1 (none) or a class, got -2"),
    ({"iou_threshold": 1.5}, "iou_threshold must lie in [0, 1], got 1.5"),
    ({"iou_threshold": NAN}, "iou_threshold must lie in [0, 1], got nan"),
    ({"score_threshold": NAN}, "score_threshold must not be NaN"),
])
def test_bad_attributes(identity, change, message):
    attrs = {k: v for k, v in {**attrs_of(3, 10, 0.5), **change}.items() if v is not None}
    assert f"{identity}: {message}" in session_error(nms_model(identity, attrs))


@pytest.mark.parametrize("identity,box_size", [(i, 4) for i in AXIS_ALIGNED] + [(i, 5) for i in ROTATED])
@pytest.mark.parametrize("boxes,scores,message", [  # "n": the box size
    ((2, 5, "n"), (2, 5, 3), "boxes must have shape [B, S, 1 or C, {n}] ({what}), got shape [2, 5, {n}]"),
    ((2, 5, 1, 3), (2, 5, 3), "boxes must have shape [B, S, 1 or C, {n}] ({what}), got shape [2, 5, 1, 3]"),
    ((2, 5, 2, "n"), (2, 5, 3),
     "boxes' third dimension must be 1 (boxes shared by all classes) or 3 (num_classes, a box per class), got 2"),
    ((2, 5, 1, "n"), (2, 5, 4),
     "scores must have shape [B, S, C] with B = 2, S = 5 (as boxes) and C = 3 (num_classes), got shape [2, 5, 4]"),
    ((2, 5, 1, "n"), (2, 4, 3),
     "scores must have shape [B, S, C] with B = 2, S = 5 (as boxes) and C = 3 (num_classes), got shape [2, 4, 3]"),
    ((2, 5, 1, "n"), (5, 3),
     "scores must have shape [B, S, C] with B = 2, S = 5 (as boxes) and C = 3 (num_classes), got shape [5, 3]"),
])
def test_bad_inputs(identity, box_size, boxes, scores, message):
    boxes = tuple(box_size if d == "n" else d for d in boxes)
    what = "x1, y1, x2, y2" if box_size == 4 else "cx, cy, w, h, theta"
    message = message.format(n=box_size, what=what)
    model = nms_model(identity, attrs_of(3, 10, 0.5))
    assert f"{identity}: {message}" in run_error(model, {"boxes": Z(boxes, f32), "scores": Z(scores, f32)})


def test_eager_errors():
    boxes, scores = torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 2)
    with pytest.raises(ValueError, match=r"trt_batched_nms: boxes must be \[B, S, 1 or C, 4\] and scores \[B, S, C\], "
                                         r"got \[1, 3, 4\] and \[1, 3, 2\]"):
        opbridge.ops.trt_batched_nms(torch.zeros(1, 3, 4), scores, 10, 0.5)
    with pytest.raises(ValueError, match=r"got \[1, 3, 3, 4\] and \[1, 3, 2\]"):
        opbridge.ops.trt_batched_nms(torch.zeros(1, 3, 3, 4), scores, 10, 0.5)
    with pytest.raises(ValueError, match=r"boxes must be \[B, S, 1 or C, 5\]"):
        opbridge.ops.trt_batched_rotated_nms(boxes, scores, 10, 0.5)
    with pytest.raises(ValueError, match="keep_topk must be >= 0, got -1"):
        opbridge.ops.trt_batched_nms(boxes, scores, -1, 0.5)
    for iou in (1.5, -0.1, NAN):
        with pytest.raises(ValueError, match=r"iou_threshold must lie in \[0, 1\], got"):
            opbridge.ops.trt_batched_nms(boxes, scores, 10, iou)
    with pytest.raises(ValueError, match="score_threshold must not be NaN"):
        opbridge.ops.trt_batched_nms(boxes, scores, 10, 0.5, NAN)
    with pytest.raises(ValueError, match="background_label_id must be -1 or a class, got -3"):
        opbridge.ops.trt_batched_nms(boxes, scores, 10, 0.5, background_label_id=-3)


# --- the eager PyTorch ops ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_eager_matches_reference_and_kernel(case):
    batch, count, classes, loc, keep, iou, score, topk, background = case
    boxes, scores = problem(np.random.default_rng(count + 3 * classes), batch, count, classes, loc)
    kwargs = dict(score_threshold=score, topk=topk, background_label_id=background)
    dets, labels, index = opbridge.ops.trt_batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores), keep, iou,
                                                       return_index=True, **kwargs)
    assert (dets.dtype, labels.dtype, index.dtype) == (torch.float32, torch.int32, torch.int32)
    expected = reference(boxes, scores, keep, iou, score, topk, background)
    for a, e in zip((dets, labels, index), expected):
        np.testing.assert_array_equal(a.numpy(), e)
    two = opbridge.ops.trt_batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores), keep, iou, **kwargs)
    assert len(two) == 2 and torch.equal(two[0], dets) and torch.equal(two[1], labels)


@pytest.mark.parametrize("case", [c for c in CASES if c[1] <= 120])
def test_eager_rotated_matches_reference(case):
    batch, count, classes, loc, keep, iou, score, topk, background = case
    boxes, scores = problem(np.random.default_rng(count + 5 * classes), batch, count, classes, loc, rotated=True)
    dets, labels = opbridge.ops.trt_batched_rotated_nms(torch.from_numpy(boxes), torch.from_numpy(scores), keep, iou,
                                                        score, topk, background)
    expected = reference(boxes, scores, keep, iou, score, topk, background)
    np.testing.assert_array_equal(dets.numpy(), expected[0])
    np.testing.assert_array_equal(labels.numpy(), expected[1])


def test_eager_clip_boxes():
    boxes = torch.tensor([[-0.5, 0.25, 1.5, NAN]]).reshape(1, 1, 1, 4)
    dets, _ = opbridge.ops.trt_batched_nms(boxes, torch.tensor([[[2.0]]]), 1, 0.5, clip_boxes=True)
    np.testing.assert_array_equal(dets.numpy(), [[[0, 0.25, 1, 1, 2]]])


# --- export round trips ---------------------------------------------------------------------------------

DYNAMIC = {"boxes": {0: "batch", 1: "boxes"}, "scores": {0: "batch", 1: "boxes"}}


class TrtNms(torch.nn.Module):
    def __init__(self, rotated=False, return_index=False):
        super().__init__()
        self.rotated, self.return_index = rotated, return_index

    def forward(self, boxes, scores):
        if self.rotated:
            return opbridge.ops.trt_batched_rotated_nms(boxes, scores, 30, 0.5, 0.05, topk=50)
        return opbridge.ops.trt_batched_nms(boxes, scores, 30, 0.5, 0.05, topk=50, return_index=self.return_index)


def export_inputs(batch, count, seed, rotated):
    boxes, scores = problem(np.random.default_rng(seed), batch, count, 4, 1, rotated)
    return torch.from_numpy(boxes), torch.from_numpy(scores)


def check_node(proto, identity, outputs):
    domain, op_type = identity.split("::")
    (node,) = [n for n in proto.graph.node if n.domain == domain]
    assert node.op_type == op_type and len(node.output) == outputs
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    expected = dict(background_label_id=-1, num_classes=4, topk=50, keep_topk=30, is_normalized=0, clip_boxes=0)
    if "Rotated" not in op_type:
        expected["return_index"] = int(outputs == 3)
    assert {k: v for k, v in attrs.items() if "threshold" not in k} == expected
    assert attrs["iou_threshold"] == f32(0.5) and attrs["score_threshold"] == f32(0.05)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("rotated,return_index", [(False, False), (False, True), (True, False)])
def test_export_round_trip(exporter, rotated, return_index):
    model = TrtNms(rotated, return_index)
    proto = opbridge.export(model, export_inputs(2, 60, 0, rotated), exporter=exporter, dynamic_axes=DYNAMIC)
    identity = "opbridge::TrtBatchedRotatedNms" if rotated else "opbridge::TrtBatchedNms"
    assert custom_nodes(proto) == [identity]
    check_node(proto, identity, 3 if return_index else 2)
    session = opbridge.create_session(proto)
    for shape, seed in [((2, 60), 0), ((1, 150), 1), ((3, 1), 2), ((1, 0), 3)]:
        boxes, scores = export_inputs(*shape, seed, rotated)
        expected = model(boxes, scores)
        if shape[1] >= 60:
            assert (expected[1] >= 0).sum() > 10
        actual = session.run(None, {"boxes": boxes.numpy(), "scores": scores.numpy()})
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e.numpy(), err_msg=str(shape))


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("rotated,return_index", [(False, True), (True, False)])
def test_export_compat_mmdeploy(exporter, rotated, return_index):
    model = TrtNms(rotated, return_index)
    args = export_inputs(1, 80, 5, rotated)
    proto = opbridge.export(model, args, exporter=exporter, compat="mmdeploy")
    identity = "mmdeploy::TRTBatchedRotatedNMS" if rotated else "mmdeploy::TRTBatchedNMS"
    assert custom_nodes(proto) == [identity]
    check_node(proto, identity, 3 if return_index else 2)
    actual = opbridge.create_session(proto).run(None, {"boxes": args[0].numpy(), "scores": args[1].numpy()})
    for a, e in zip(actual, model(*args)):
        np.testing.assert_array_equal(a, e.numpy())


def test_export_has_no_mmcv_identity():
    with pytest.raises(ValueError, match=r"opbridge::TrtBatchedNms has no mmcv identity .*\(mmcv has none\)"):
        opbridge.export(TrtNms(), export_inputs(1, 10, 0, False), exporter="legacy", compat="mmcv")


@pytest.mark.parametrize("identity,box_size", [(AXIS_ALIGNED[-1], 4), (ROTATED[0], 5)])
def test_an_output_past_the_per_call_limit_is_refused_before_it_is_allocated(identity, box_size):
    """keep_topk = 2^31 - 1 (the largest allowed) for 52 images: a 2 TB output. It is refused before
    any allocation (the per-call output limit the RoI ops share, core/work_limits.h), with an error
    naming the op, the output's shape and the limit."""
    model = nms_model(identity, attrs_of(num_classes=5, keep_topk=2**31 - 1, iou=0.5))
    feeds = {"boxes": np.zeros((52, 3, 1, box_size), np.float32), "scores": np.zeros((52, 3, 5), np.float32)}
    message = run_error(model, feeds)
    assert (f"{identity}: the output [52, 2147483647, {box_size + 1}] would hold more than the limit of 2^30 "
            "(1073741824) elements per call") in message
