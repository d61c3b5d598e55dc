"""Soft-NMS through the built library in ORT, and the eager PyTorch op, against a reference
written from the spec (compat_ops.md section 5.5, mmcv's softnms_cpu) in plain Python over
float32 scalars, so that every comparison and decay is done in the same precision."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import opbridge.ops
from graphs import one_node_model, run, run_error, session_error
from opbridge import manifest

IDENTITIES = manifest.load()["soft_nms"].identities
f32 = np.float32


def soft_nms_reference(boxes, scores, iou_threshold, sigma, min_score, method, offset):
    boxes = [[f32(v) for v in b] for b in boxes]
    sc = [f32(s) for s in scores]
    idx = list(range(len(sc)))
    off = f32(offset)
    area = [(b[2] - b[0] + off) * (b[3] - b[1] + off) for b in boxes]
    dets, inds = [], []
    n = len(sc)
    i = 0
    while i < n:
        best = i
        for k in range(i + 1, n):  # first strict maximum; a NaN at i is never beaten
            if sc[best] < sc[k]:
                best = k
        for arr in (boxes, sc, idx, area):
            arr[i], arr[best] = arr[best], arr[i]
        dets.append(boxes[i] + [sc[i]])
        inds.append(idx[i])
        k = i + 1
        while k < n:
            b, a = boxes[i], boxes[k]
            w = max(f32(0), min(b[2], a[2]) - max(b[0], a[0]) + off)
            h = max(f32(0), min(b[3], a[3]) - max(b[1], a[1]) + off)
            inter = w * h
            with np.errstate(invalid="ignore", divide="ignore"):
                iou = inter / (area[i] + area[k] - inter)
            if method == 0:
                weight = f32(0) if iou >= iou_threshold else f32(1)
            elif method == 1:
                weight = f32(1) - iou if iou >= iou_threshold else f32(1)
            else:
                weight = f32(math.exp(-float(iou * iou) / sigma))
            sc[k] = f32(sc[k] * weight)
            if sc[k] < min_score:
                for arr in (boxes, sc, idx, area):
                    arr[k] = arr[n - 1]
                n -= 1
            else:
                k += 1
        i += 1
    return np.array(dets, np.float32).reshape(-1, 5), np.array(inds, np.int64)


def nms_model(identity="opbridge::SoftNonMaxSuppression", **attrs):
    full = dict(iou_threshold=0.3, sigma=0.5, min_score=1e-3, method=1, offset=0)
    full.update(attrs)
    full = {k: v for k, v in full.items() if v is not None}
    return one_node_model(identity, full, ["boxes", "scores"], ["dets", "inds"])


def clustered_boxes(rng, count, clusters, size=100.0):
    centres = rng.uniform(0, 500, (clusters, 2))
    pick = rng.integers(0, clusters, count)
    c = centres[pick] + rng.normal(0, 8, (count, 2))
    wh = rng.uniform(0.3 * size, size, (count, 2))
    boxes = np.concatenate([c - wh / 2, c + wh / 2], axis=1).astype(np.float32)
    return boxes, rng.random(count).astype(np.float32)


def assert_same(actual_dets, actual_inds, ref_dets, ref_inds):
    np.testing.assert_array_equal(actual_inds, ref_inds)
    # Box coordinates are copied; scores may differ by an ulp of exp() (gaussian).
    np.testing.assert_array_equal(actual_dets[:, :4], ref_dets[:, :4])
    np.testing.assert_allclose(actual_dets[:, 4], ref_dets[:, 4], rtol=1e-6, atol=0)


SWEEP = list(itertools.product([1, 2, 10, 300], [0, 1, 2], [0, 1], [(0.3, 1e-3), (0.5, 0.1), (0.0, 0.0)]))


@pytest.mark.parametrize("count,method,offset,thresholds", SWEEP)
def test_matches_reference(count, method, offset, thresholds):
    iou_threshold, min_score = thresholds
    rng = np.random.default_rng(count * 7 + method * 3 + offset)
    boxes, scores = clustered_boxes(rng, count, max(1, count // 6))
    args = (iou_threshold, 0.5, min_score, method, offset)
    ref_dets, ref_inds = soft_nms_reference(boxes, scores, *args)
    dets, inds = run(nms_model(iou_threshold=iou_threshold, min_score=min_score, method=method, offset=offset),
                     {"boxes": boxes, "scores": scores})
    assert dets.dtype == np.float32 and inds.dtype == np.int64
    assert_same(dets, inds, ref_dets, ref_inds)
    eager_dets, eager_inds = torch.ops.opbridge.soft_nms(torch.from_numpy(boxes), torch.from_numpy(scores), *args)
    assert_same(eager_dets.numpy(), eager_inds.numpy(), ref_dets, ref_inds)


def test_all_scores_below_min_score_keep_exactly_one():
    boxes = np.array([[0, 0, 1, 1], [5, 5, 6, 6], [9, 9, 10, 10]], np.float32)
    scores = np.array([1e-4, 3e-4, 2e-4], np.float32)
    dets, inds = run(nms_model(min_score=1e-3), {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(inds, [1])


def test_ties_keep_input_order():
    boxes = np.array([[0, 0, 1, 1], [5, 5, 6, 6], [9, 9, 10, 10]], np.float32)
    _, inds = run(nms_model(), {"boxes": boxes, "scores": np.full(3, 0.5, np.float32)})
    np.testing.assert_array_equal(inds, [0, 1, 2])


def test_nan_scores_follow_mmcv():
    """NaN never compares greater: a NaN box is emitted only when the scan reaches its position
    with nothing greater after it, and NaN scores are never dropped (NaN < min_score is false)."""
    rng = np.random.default_rng(3)
    boxes, scores = clustered_boxes(rng, 12, 3)
    scores[[2, 7]] = np.nan
    ref = soft_nms_reference(boxes, scores, 0.3, 0.5, 1e-3, 1, 0)
    dets, inds = run(nms_model(), {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(inds, ref[1])
    np.testing.assert_array_equal(dets, ref[0])


def test_degenerate_boxes():
    """Zero-area boxes: IoU 0/0 is NaN, which decays nothing under naive and linear."""
    boxes = np.array([[1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 4, 4]], np.float32)
    scores = np.array([0.9, 0.8, 0.7], np.float32)
    for method in (0, 1, 2):
        ref = soft_nms_reference(boxes, scores, 0.3, 0.5, 1e-3, method, 0)
        dets, inds = run(nms_model(method=method), {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(inds, ref[1])
        np.testing.assert_array_equal(np.isnan(dets), np.isnan(ref[0]))


def test_dense_workload_shape_matches_reference():
    """The benchmark's soft_nms.dense kind of input, smaller: many boxes around few centres."""
    rng = np.random.default_rng(21)
    boxes, scores = clustered_boxes(rng, 1500, 150, size=60)
    for method in (1, 2):
        ref = soft_nms_reference(boxes, scores, 0.3, 0.5, 1e-3, method, 0)
        dets, inds = run(nms_model(method=method), {"boxes": boxes, "scores": scores})
        assert_same(dets, inds, *ref)


@pytest.mark.parametrize("count", [7000, 8000])
def test_thousands_of_boxes_keep_soft_nms_s_invariants(count):
    """Around the CUDA kernel's switch from shared memory (about 7,250 boxes on an H100) to device
    memory for its state: on the GPU (./run.sh test-gpu) run() checks the CUDA twin against the CPU
    kernel here, bit for bit. On the CPU (where the references take minutes at this size) the
    invariants of mmcv's loop: each box kept once with its own coordinates, scores only decayed and
    never rising along the picks (each pick is the largest remaining score, and scores only
    decay), and none below min_score after the first pick (lower ones were dropped before)."""
    rng = np.random.default_rng(count)
    boxes, scores = clustered_boxes(rng, count, count // 10, size=60)
    for method in (1, 2):
        dets, inds = run(nms_model(method=method), {"boxes": boxes, "scores": scores})
        assert 0.05 * count < len(inds) < 0.95 * count  # many kept, many dropped
        assert len(np.unique(inds)) == len(inds)
        np.testing.assert_array_equal(dets[:, :4], boxes[inds])
        assert np.all(dets[:, 4] <= scores[inds])
        assert np.all(np.diff(dets[:, 4]) <= 0)
        assert np.all(dets[1:, 4] >= np.float32(1e-3))
        assert np.any(dets[:, 4] < scores[inds])  # something was decayed


@pytest.mark.parametrize("attrs,message", [
    (dict(method=2, sigma=0.0), "sigma must be > 0 for method 2 (gaussian), got 0"),
    (dict(iou_threshold=float("nan")), "iou_threshold must not be NaN"),
])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_attributes_fail_at_session_creation(identity, attrs, message):
    assert f"{identity}: {message}" in session_error(nms_model(identity, **attrs))


@pytest.mark.parametrize("boxes_shape,scores_shape,message", [
    ((3, 5), (3,), "boxes must have shape [N, 4] (x1, y1, x2, y2), got shape [3, 5]"),
    ((3,), (3,), "boxes must have shape [N, 4] (x1, y1, x2, y2), got shape [3]"),
    ((3, 4), (4,), "scores must have shape [N] with N = 3 (the number of boxes), got shape [4]"),
    ((3, 4), (3, 1), "scores must have shape [N] with N = 3 (the number of boxes), got shape [3, 1]"),
])
def test_bad_inputs_fail_at_run_time(boxes_shape, scores_shape, message):
    feeds = {"boxes": np.zeros(boxes_shape, np.float32), "scores": np.zeros(scores_shape, np.float32)}
    assert f"opbridge::SoftNonMaxSuppression: {message}" in run_error(nms_model(), feeds)


def test_mmcv_graph_as_exported():
    """mmcv's SoftNMSop.symbolic: mmcv domain, five attributes, two outputs, opset 11, IR 6."""
    model = nms_model("mmcv::SoftNonMaxSuppression", iou_threshold=0.3, sigma=0.5, min_score=1e-3, method=1, offset=0)
    model.opset_import[0].version = 11
    model.ir_version = 6
    boxes, scores = clustered_boxes(np.random.default_rng(8), 40, 5)
    dets, inds = run(model, {"boxes": boxes, "scores": scores})
    assert_same(dets, inds, *soft_nms_reference(boxes, scores, 0.3, 0.5, 1e-3, 1, 0))


def test_python_wrapper_validates_method():
    with pytest.raises(ValueError, match="method must be one of"):
        opbridge.ops.soft_nms(torch.zeros(1, 4), torch.zeros(1), method="hard")
