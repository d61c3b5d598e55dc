"""Rotated NMS through the built library in ORT (opbridge::NmsRotated, opbridge::MulticlassNmsRotated,
mmdeploy::NMSRotated) and the eager PyTorch ops (opbridge.ops.nms_rotated, batched_nms_rotated,
multiclass_nms_rotated), against the float64 reference of rotated_reference.py (IoU by clipping one
rectangle with the other, a plain greedy loop), which is independent of the kernel's algorithm
(mmcv's float32 IoU).

mmcv's IoU is wrong where an edge of one box lies on the line of an edge of the other (see
rotated_reference.py and the op page), so the random boxes here have independent random angles;
the exact angles 0 and +-pi/2 appear on some boxes, whose random positions keep their edges off
each other's lines."""

from __future__ import annotations

import itertools
import math

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge.ops
import rotated_reference
from graphs import cast_around, one_node_model, round_to, run, run_error, session_error

f32 = np.float32
INT64 = {"idxs": "int64"}
PI = math.pi
NAN, INF = float("nan"), float("inf")


def nms_model(identity="opbridge::NmsRotated", idxs=False, **attrs):
    inputs = ["boxes", "scores", "idxs"] if idxs else ["boxes", "scores"]
    output = "keep" if identity == "opbridge::NmsRotated" else "selected"
    return one_node_model(identity, attrs, inputs, [output], input_types=INT64)


def run_nms(boxes, scores, threshold, idxs=None, **attrs):
    feeds = {"boxes": boxes, "scores": scores}
    if idxs is not None:
        feeds["idxs"] = idxs
    (keep,) = run(nms_model(idxs=idxs is not None, iou_threshold=threshold, **attrs), feeds)
    assert keep.dtype == np.int64 and keep.ndim == 1
    return keep


def run_multiclass(boxes, scores, iou_threshold, score_threshold, identity="opbridge::MulticlassNmsRotated"):
    model = nms_model(identity, iou_threshold=iou_threshold, score_threshold=score_threshold)
    (selected,) = run(model, {"boxes": boxes, "scores": scores})
    assert selected.dtype == np.int64 and selected.ndim == 2 and selected.shape[1] == 3
    return selected


# Exact angles that some boxes take: 0, +-pi/2 (as float32), beyond +-2 pi.
SPECIAL_ANGLES = np.array([0.0, PI / 2, -PI / 2, 2 * PI + 0.7, -2 * PI - 1.3, 7.5], f32)


def clustered(rng, count, per_cluster=8):
    """Rotated boxes jittered around count / per_cluster objects (many overlap, with IoUs spread
    over (0, 1)), at the same density whatever the count; every box has its own random angle in
    [-3 pi, 3 pi] (negative and beyond 2 pi), every 7th one of SPECIAL_ANGLES; scores with ties."""
    clusters = max(count // per_cluster, 1)
    spread = 60.0 * math.sqrt(clusters)
    centres = rng.uniform(0, spread, (clusters, 2))
    sizes = np.exp(rng.uniform(math.log(4), math.log(40), (clusters, 2)))
    pick = rng.integers(0, clusters, count)
    ctr = centres[pick] + rng.normal(0, 0.25, (count, 2)) * sizes[pick]
    wh = sizes[pick] * np.exp(rng.normal(0, 0.2, (count, 2)))
    theta = rng.uniform(-3 * PI, 3 * PI, count)
    theta[::7] = SPECIAL_ANGLES[rng.integers(0, len(SPECIAL_ANGLES), len(theta[::7]))]
    # Every 6th box nearly duplicates the one before it (IoU up to ~0.95), its angle 0.01 to 0.05
    # away: edges close to each other's lines but clearly not on them.
    dup = np.arange(6, count, 6)
    ctr[dup] = ctr[dup - 1] + rng.normal(0, 0.01, (len(dup), 2)) * wh[dup - 1]
    wh[dup] = wh[dup - 1] * np.exp(rng.normal(0, 0.01, (len(dup), 2)))
    theta[dup] = theta[dup - 1] + rng.choice([-1, 1], len(dup)) * rng.uniform(0.01, 0.05, len(dup))
    boxes = np.column_stack([ctr, wh, theta]).astype(f32)
    scores = rng.random(count).astype(f32)
    if count:
        scores[::5] = scores[0]  # ties
    return boxes, scores


# --- the reference ------------------------------------------------------------------------------


def visit_key(scores):
    """rotated_reference's visiting order: NaN first, then descending score, ties (-0 and +0
    included) by lower index."""
    scores = np.asarray(scores, np.float64)
    return lambda i: (0, 0.0, i) if math.isnan(scores[i]) else (1, -scores[i], i)


def _corners(boxes):
    """[n, 5] boxes -> [n, 4, 2] float64 corners, in order around the box."""
    cx, cy, w, h, theta = (boxes[:, k].astype(np.float64) for k in range(5))
    c, s = np.cos(theta), np.sin(theta)
    u = np.array([-0.5, 0.5, 0.5, -0.5])[None] * w[:, None]
    v = np.array([-0.5, -0.5, 0.5, 0.5])[None] * h[:, None]
    return np.stack([cx[:, None] + c[:, None] * u - s[:, None] * v, cy[:, None] + s[:, None] * u + c[:, None] * v], -1)


def _apart(pa, pb):
    """Whether the rectangles with corners pa[k] and pb[k] ([m, 4, 2]) are separated (with a
    margin) along one of their edge normals, which for two rectangles means they do not meet."""
    apart = np.zeros(len(pa), bool)
    for corners in (pa, pb):
        for e in range(2):
            axis = corners[:, e + 1] - corners[:, e]
            pa_proj, pb_proj = np.einsum("mkd,md->mk", pa, axis), np.einsum("mkd,md->mk", pb, axis)
            slack = 1e-9 * (np.abs(pa_proj).max(1) + np.abs(pb_proj).max(1))
            apart |= (pa_proj.max(1) < pb_proj.min(1) - slack) | (pb_proj.max(1) < pa_proj.min(1) - slack)
    return apart


def _groups(boxes, categories):
    """Labels of the connected groups of the "may overlap" graph over valid boxes of one
    category (rectangles not separated by one of their edge normals). Boxes in different groups
    have an intersection of exactly 0, or never interact in the reference (invalid boxes, other
    categories)."""
    b = boxes.astype(np.float64)
    n = len(b)
    with np.errstate(invalid="ignore", over="ignore"):
        valid = np.isfinite(b).all(1) & (b[:, 2] > 0) & (b[:, 3] > 0)
    b = np.where(valid[:, None], b, 0.0)
    radius = 0.5 * np.hypot(b[:, 2], b[:, 3])
    corners = _corners(b)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for start in range(0, n, 256):
        rows = np.arange(start, min(n, start + 256))
        dist = np.hypot(b[rows, None, 0] - b[None, :, 0], b[rows, None, 1] - b[None, :, 1])
        near = (dist <= (radius[rows, None] + radius[None, :]) * (1 + 1e-9)) & valid[rows, None] & valid[None, :]
        near &= (categories[rows, None] == categories[None, :]) & (rows[:, None] < np.arange(n)[None, :])
        i, j = np.nonzero(near)
        i = rows[i]
        keep = ~_apart(corners[i], corners[j])
        for p, q in zip(i[keep].tolist(), j[keep].tolist()):
            rp, rq = find(p), find(q)
            if rp != rq:
                parent[max(rp, rq)] = min(rp, rq)
    return np.array([find(i) for i in range(n)])


def reference_nms(boxes, scores, threshold, strict, categories=None):
    """rotated_reference.greedy_nms_rotated(boxes, scores, threshold, strict, categories), computed
    group by group for speed when an IoU of 0 cannot suppress (strict, or threshold > 0): greedy NMS
    never lets boxes of different groups (see _groups) interact, so its kept set is the union of
    the groups' kept sets, in the same visiting order."""
    boxes = np.asarray(boxes, f32).reshape(-1, 5)
    scores = np.asarray(scores, f32).reshape(-1)
    n = len(scores)
    cats = np.zeros(n, np.int64) if categories is None else np.asarray(categories, np.int64)
    if n == 0 or (not strict and threshold <= 0):
        return rotated_reference.greedy_nms_rotated(boxes, scores, threshold, strict, cats)
    labels = _groups(boxes, cats)
    kept = []
    for label in np.unique(labels):
        members = np.nonzero(labels == label)[0]
        local = rotated_reference.greedy_nms_rotated(boxes[members], scores[members], threshold, strict, cats[members])
        kept += members[local].tolist()
    return np.array(sorted(kept, key=visit_key(scores)), np.int64)


def multiclass_reference(boxes, scores, iou_threshold, score_threshold):
    """mmdeploy's NMSRotated from the spec: per batch and class, the boxes scoring > score_threshold
    (never NaN), greedy with IoU > iou_threshold, rows (batch, class, box) in batch, class and
    visiting order."""
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            candidates = np.nonzero(scores[b, c] > score_threshold)[0]
            keep = candidates[reference_nms(boxes[b, candidates], scores[b, c, candidates], iou_threshold, True)]
            rows += [(b, c, k) for k in keep]
    return np.array(rows, np.int64).reshape(-1, 3)


def test_reference_groups_change_nothing():
    """The group-by-group shortcut gives what the plain reference gives."""
    rng = np.random.default_rng(77)
    boxes, scores = clustered(rng, 120)
    idxs = rng.integers(0, 3, 120)
    scores[[3, 50]] = np.nan
    for threshold, strict in [(0.0, True), (0.3, False), (0.5, True), (1.0, False)]:
        for categories in (None, idxs):
            np.testing.assert_array_equal(
                reference_nms(boxes, scores, threshold, strict, categories),
                rotated_reference.greedy_nms_rotated(boxes, scores, threshold, strict, categories))


# --- opbridge::NmsRotated ------------------------------------------------------------------------

SWEEP = list(itertools.product([0, 1, 2, 10, 300, 2000], [0.0, 0.1, 0.3, 0.5, 0.9, 1.0]))


@pytest.mark.parametrize("count,threshold", SWEEP)
def test_matches_reference(count, threshold):
    rng = np.random.default_rng(count * 10 + int(threshold * 10))
    boxes, scores = clustered(rng, count)
    expected = reference_nms(boxes, scores, threshold, strict=False)
    np.testing.assert_array_equal(run_nms(boxes, scores, threshold), expected)
    if count >= 300:  # the sweep exercises suppression at every threshold but 1
        assert (len(expected) < count) == (threshold < 1.0)
        assert len(expected) > 1 or threshold == 0


@pytest.mark.parametrize("count,threshold", [(10, 0.3), (300, 0.1), (300, 0.5), (1000, 0.7)])
def test_counterclockwise_negates_theta(count, threshold):
    """clockwise=0 is the reference (and clockwise=1) on negated angles."""
    rng = np.random.default_rng(count + 3)
    boxes, scores = clustered(rng, count)
    negated = boxes.copy()
    negated[:, 4] = -negated[:, 4]
    keep = run_nms(boxes, scores, threshold, clockwise=0)
    np.testing.assert_array_equal(keep, reference_nms(negated, scores, threshold, strict=False))
    np.testing.assert_array_equal(keep, run_nms(negated, scores, threshold, clockwise=1))
    np.testing.assert_array_equal(run_nms(boxes, scores, threshold, clockwise=1),
                                  reference_nms(boxes, scores, threshold, strict=False))
    if count >= 300:
        assert not np.array_equal(keep, run_nms(boxes, scores, threshold))  # the attribute matters


def test_counterclockwise_hand_worked():
    """Two long boxes along the diagonal y = x overlap; negated, box 1 lies across the other
    diagonal, 4.2 away from box 0's axis, and they do not."""
    boxes = np.array([[0, 0, 10, 2, 0.785], [3, 3, 10, 2, 0.7]], f32)
    scores = np.array([0.9, 0.8], f32)
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.2), [0])
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.2, clockwise=0), [0, 1])
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.2, clockwise=1), [0])


@pytest.mark.parametrize("count,threshold", [(0, 0.5), (1, 0.5), (40, 0.3), (500, 0.5), (2000, 0.1), (2000, 0.7)])
def test_categories_never_suppress_each_other(count, threshold):
    rng = np.random.default_rng(count + 11)
    boxes, scores = clustered(rng, count)
    idxs = rng.choice(np.array([-3, 0, 1, 2, 7, 2**40], np.int64), count)
    expected = reference_nms(boxes, scores, threshold, strict=False, categories=idxs)
    np.testing.assert_array_equal(run_nms(boxes, scores, threshold, idxs), expected)
    if count >= 500:  # categories matter: one category would suppress more
        assert len(reference_nms(boxes, scores, threshold, strict=False)) < len(expected)


def test_categories_hand_worked():
    """Identical boxes suppress only within their category; everything kept comes out in
    descending score order, ties by lower index."""
    a, b = [10, 10, 8, 4, 0.3], [40, 10, 6, 6, -1.0]
    boxes = np.array([a, a, b, a, b, a], f32)
    scores = np.array([0.5, 0.9, 0.7, 0.9, 0.7, 0.2], f32)
    idxs = np.array([1, 0, 1, 1, 0, 0], np.int64)
    # Order: 1 (0.9, cat 0), 3 (0.9, cat 1), 2 (0.7, cat 1), 4 (0.7, cat 0), 0 (0.5, cat 1, a like 3),
    # 5 (0.2, cat 0, a like 1).
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.5, idxs), [1, 3, 2, 4])
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.5), [1, 2])


def test_score_ties_keep_the_lower_index():
    rng = np.random.default_rng(8)
    boxes, _ = clustered(rng, 60, per_cluster=20)
    for scores in [np.full(60, 0.5, f32), np.where(np.arange(60) % 2 == 0, f32(0.0), f32(-0.0)).astype(f32)]:
        for threshold in (0.0, 0.3, 0.6):
            keep = run_nms(boxes, scores, threshold)
            np.testing.assert_array_equal(keep, reference_nms(boxes, scores, threshold, strict=False))
            np.testing.assert_array_equal(keep, np.sort(keep))  # one score: index order
            assert keep[0] == 0


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.7])
def test_nan_scores_come_first(threshold):
    rng = np.random.default_rng(12)
    boxes, scores = clustered(rng, 300)
    scores[rng.choice(300, 30, replace=False)] = np.nan
    scores[[7, 8]] = [np.inf, -np.inf]
    keep = run_nms(boxes, scores, threshold)
    np.testing.assert_array_equal(keep, reference_nms(boxes, scores, threshold, strict=False))
    # torch.sort(descending=True, stable=True) puts NaN first too.
    order = torch.sort(torch.from_numpy(scores), descending=True, stable=True)[1].numpy()
    np.testing.assert_array_equal(keep, order[np.isin(order, keep)])
    assert np.isnan(scores[keep[0]])


# A box B, and variants of it that are degenerate for mmcv's rule (IoU 0 with every box).
BASE = [50, 50, 20, 10, 0.3]
DEGENERATE = [
    [50, 50, 0, 10, 0.3],  # w = 0
    [50, 50, 20, 0, 0.3],  # h = 0
    [50, 50, -20, 10, 0.3],  # one side negative: area < 0
    [NAN, 50, 20, 10, 0.3],
    [50, 50, 20, NAN, 0.3],
    [50, 50, 20, 10, NAN],
    [50, 50, INF, 10, 0.3],
    [-INF, 50, 20, 10, 0.3],
    [50, 50, 20, 10, INF],
    [50, 50, 1e-8, 1e-7, 0.3],  # area 1e-15, below mmcv's 1e-14
    [50, 50, 3e38, 3e38, 0.3],  # w * h overflows
]


def degenerate_case(degenerate_first):
    """Boxes: the degenerate variants, then B, then B turned by 0.03 (IoU 0.964 with B), then a box
    far away. Scores: the degenerate ones above B (they would suppress it if they counted) or
    below it (they would be suppressed)."""
    n = len(DEGENERATE)
    boxes = np.array(DEGENERATE + [BASE, [50, 50, 20, 10, 0.33], [200, 200, 5, 5, 1.0]], f32)
    low, high = np.linspace(0.1, 0.2, n), np.linspace(0.8, 0.9, n)
    scores = np.concatenate([high if degenerate_first else low, [0.6, 0.5, 0.4]]).astype(f32)
    return boxes, scores, n


@pytest.mark.parametrize("degenerate_first", [True, False])
@pytest.mark.parametrize("threshold", [0.1, 0.5, 0.85, 1.0])
def test_degenerate_boxes_are_kept_and_suppress_nothing(degenerate_first, threshold):
    boxes, scores, n = degenerate_case(degenerate_first)
    keep = run_nms(boxes, scores, threshold)
    np.testing.assert_array_equal(keep, reference_nms(boxes, scores, threshold, strict=False))
    survivors = {n, n + 2} | ({n + 1} if threshold > 0.97 else set())
    assert set(keep.tolist()) == set(range(n)) | survivors
    eager = opbridge.ops.nms_rotated(torch.from_numpy(boxes), torch.from_numpy(scores), threshold)
    np.testing.assert_array_equal(eager.numpy(), keep)


@pytest.mark.parametrize("degenerate_first", [True, False])
def test_threshold_zero_suppresses_degenerate_boxes_too(degenerate_first):
    """Under IoU >= 0 an IoU of 0 suppresses: only the first box in score order is kept (per
    category), degenerate or not, as in mmcv."""
    boxes, scores, n = degenerate_case(degenerate_first)
    order = sorted(range(len(scores)), key=visit_key(scores))
    assert (order[0] < n) == degenerate_first
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.0), order[:1])
    idxs = np.arange(len(scores), dtype=np.int64) % 2
    expected = [order[0]] + [i for i in order if idxs[i] != idxs[order[0]]][:1]
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.0, idxs), expected)
    eager = opbridge.ops.batched_nms_rotated(torch.from_numpy(boxes), torch.from_numpy(scores),
                                             torch.from_numpy(idxs), 0.0)
    np.testing.assert_array_equal(eager.numpy(), expected)


@pytest.mark.parametrize("threshold", [0.3, 0.6])
def test_both_sides_negative_is_the_absolute_box(threshold):
    """w and h both negative: the |w| x |h| box (its area w * h is positive), as in mmcv."""
    rng = np.random.default_rng(21)
    boxes, scores = clustered(rng, 200)
    flipped = boxes.copy()
    flipped[::3, 2:4] = -flipped[::3, 2:4]
    expected = reference_nms(boxes, scores, threshold, strict=False)
    np.testing.assert_array_equal(run_nms(flipped, scores, threshold), expected)
    selected = run_multiclass(flipped[None], scores[None, None], threshold, 0.0)
    np.testing.assert_array_equal(selected[:, 2], reference_nms(boxes, scores, threshold, strict=True))


def test_iou_exactly_at_the_threshold():
    """Axis-aligned boxes 4 x 2 and 4 x 4 whose centres are 2 apart: intersection 4, union 20,
    IoU exactly float32(0.2) in mmcv's arithmetic. mmcv's rule (>=) suppresses at 0.2, mmdeploy's
    (>) does not; one float32 step away they swap."""
    boxes = np.array([[0, 0, 4, 2, 0], [2, 0, 4, 4, 0]], f32)
    scores = np.array([0.9, 0.8], f32)
    above, below = float(np.nextafter(f32(0.2), f32(1))), float(np.nextafter(f32(0.2), f32(0)))
    np.testing.assert_array_equal(run_nms(boxes, scores, 0.2), [0])
    np.testing.assert_array_equal(run_nms(boxes, scores, above), [0, 1])
    for identity in ["opbridge::MulticlassNmsRotated", "mmdeploy::NMSRotated"]:
        rows = run_multiclass(boxes[None], scores[None, None], 0.2, 0.0, identity)
        np.testing.assert_array_equal(rows, [[0, 0, 0], [0, 0, 1]])
        rows = run_multiclass(boxes[None], scores[None, None], below, 0.0, identity)
        np.testing.assert_array_equal(rows, [[0, 0, 0]])


# --- opbridge::MulticlassNmsRotated and mmdeploy::NMSRotated ---------------------------------------

def batch_of_boxes(rng, batch, count, per_cluster=8):
    boxes = np.zeros((batch, count, 5), f32)
    for b in range(batch):
        boxes[b] = clustered(rng, count, per_cluster)[0]
    return boxes


MULTICLASS = [(1, 1, 0, 0.5), (2, 3, 0, 0.5), (2, 3, 1, 0.5), (2, 3, 60, 0.0),
              (2, 3, 300, 0.1), (2, 3, 300, 0.5), (2, 3, 300, 1.0), (1, 4, 1500, 0.7)]


@pytest.mark.parametrize("batch,classes,count,iou_threshold", MULTICLASS)
def test_multiclass_matches_reference(batch, classes, count, iou_threshold):
    rng = np.random.default_rng(batch * 1000 + classes * 100 + count + int(iou_threshold * 10))
    boxes = batch_of_boxes(rng, batch, count)
    scores = rng.random((batch, classes, count)).astype(f32)
    if batch and classes and count > 3:
        scores[0, 0, ::3] = 0.25  # exactly the score threshold: not > it, left out
        scores[-1, -1, 1] = np.nan  # never passes
        scores[-1, 0, 2] = np.inf
    expected = multiclass_reference(boxes, scores, iou_threshold, 0.25)
    for identity in ["opbridge::MulticlassNmsRotated", "mmdeploy::NMSRotated"]:
        selected = run_multiclass(boxes, scores, iou_threshold, 0.25, identity)
        np.testing.assert_array_equal(selected, expected, err_msg=identity)
    if count >= 300:
        assert 0 < len(expected) and (len(expected) < (scores > 0.25).sum()) == (iou_threshold < 1.0)
    if batch and classes and count > 3:
        assert not ((expected[:, 0] == 0) & (expected[:, 1] == 0) & (expected[:, 2] % 3 == 0)).any()
        assert [1, 0, 2] in expected.tolist() or batch == 1


def half_nms_model(identity, dtype, idxs=False, **attrs):
    """nms_model with boxes and scores in `dtype` (bfloat16 behind casts from float32)."""
    model = nms_model(identity, idxs, **attrs)
    for value in model.graph.input:
        if value.name in ("boxes", "scores"):
            value.type.tensor_type.elem_type = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.BFLOAT16
    return cast_around(model, dtype, {"boxes", "scores"}, set()) if dtype == "bfloat16" else model


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", ["opbridge::NmsRotated", "opbridge::MulticlassNmsRotated", "mmdeploy::NMSRotated"])
def test_half_keeps_the_float32_ops_boxes_on_the_half_values(identity, dtype):
    """float16 and bfloat16 boxes and scores: exactly the boxes (rows) the float32 op keeps on the half
    values, in its order, which differ from those on the unrounded values (scores packed near 0.5 tie
    when rounded; some centres past 65,504 are infinite in float16)."""
    rng = np.random.default_rng(48)
    if identity == "opbridge::NmsRotated":
        boxes, scores = clustered(rng, 2000)
        idxs = rng.integers(0, 3, len(scores)).astype(np.int64)
        attrs = {"iou_threshold": 0.3}
    else:
        boxes = batch_of_boxes(rng, 2, 400)
        scores = rng.random((2, 3, 400)).astype(f32)
        attrs = {"iou_threshold": 0.3, "score_threshold": 0.25}
    scores = np.where(np.arange(scores.shape[-1]) % 2 == 0, f32(0.5) + scores * f32(1e-3), scores).astype(f32)
    boxes = boxes.copy()
    boxes[..., ::89, 0] *= 3000
    rounded = {"boxes": round_to(boxes, dtype), "scores": round_to(scores, dtype)}
    feeds = rounded if dtype == "bfloat16" else {n: v.astype(np.float16) for n, v in rounded.items()}
    extra = {"idxs": idxs} if identity == "opbridge::NmsRotated" else {}
    with_idxs = bool(extra)
    (got,) = run(half_nms_model(identity, dtype, with_idxs, **attrs), {**feeds, **extra})
    (exact,) = run(nms_model(identity, with_idxs, **attrs), {**rounded, **extra})
    np.testing.assert_array_equal(got, exact)
    (unrounded,) = run(nms_model(identity, with_idxs, **attrs), {"boxes": boxes, "scores": scores, **extra})
    assert not np.array_equal(got, unrounded)


def test_multiclass_hand_worked_rows():
    """Rows in batch, class, descending score order; score > threshold strictly; IoU > threshold."""
    a = [10, 10, 8, 4, 0.3]
    boxes = np.array([[a, a, [40, 40, 5, 5, 1.0]], [[0, 0, 2, 2, 0], a, a]], f32)
    scores = np.array([[[0.3, 0.9, 0.5], [0.1, 0.2, 0.2]],
                       [[0.2, 0.6, 0.7], [np.nan, 0.4, 0.41]]], f32)
    rows = run_multiclass(boxes, scores, 0.5, 0.2)
    # (0, 0): 1 (0.9) then 2 (0.5); 0 duplicates 1. (0, 1): nothing above 0.2. (1, 0): 2 (0.7), 1 is a
    # duplicate, 0 is exactly 0.2. (1, 1): 2 (0.41) suppresses 1; NaN never passes.
    np.testing.assert_array_equal(rows, [[0, 0, 1], [0, 0, 2], [1, 0, 2], [1, 1, 2]])
    np.testing.assert_array_equal(rows, multiclass_reference(boxes, scores, 0.5, 0.2))
    np.testing.assert_array_equal(run_multiclass(boxes, scores, 1.0, 0.2),
                                  [[0, 0, 1], [0, 0, 2], [0, 0, 0], [1, 0, 2], [1, 0, 1], [1, 1, 2], [1, 1, 1]])


def test_multiclass_score_threshold_defaults_to_zero():
    boxes = np.array([[[0, 0, 4, 4, 0.1], [10, 0, 4, 4, 0.2], [20, 0, 4, 4, 0.3]]], f32)
    scores = np.array([[[0.0, -0.5, 0.25]]], f32)
    for identity in ["opbridge::MulticlassNmsRotated", "mmdeploy::NMSRotated"]:
        (rows,) = run(nms_model(identity, iou_threshold=0.5), {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(rows, [[0, 0, 2]])
        (rows,) = run(nms_model(identity, iou_threshold=0.5, score_threshold=-1.0), {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(rows, [[0, 0, 2], [0, 0, 0], [0, 0, 1]])


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.99])
def test_multiclass_degenerate_boxes_are_kept_and_suppress_nothing(threshold):
    """mmdeploy's rule has no guard of its own; opbridge gives a box whose area is not > 0 or that
    has a non-finite value an IoU of 0 (also under IoU > 0), so it is kept and suppresses nothing.
    (The 1e-8 x 1e-7 box of DEGENERATE has an area > 0 and takes part here, with mmcv's arithmetic,
    which is wrong for boxes below the coordinates' float resolution: left out, see
    test_sub_resolution_box_follows_mmcv_arithmetic.)"""
    boxes, scores, n = degenerate_case(True)
    tiny = DEGENERATE.index([50, 50, 1e-8, 1e-7, 0.3])
    scores[tiny] = -1.0  # below the score threshold: not a candidate
    rows = run_multiclass(boxes[None], scores[None, None], threshold, 0.0)
    survivors = {n, n + 2} | ({n + 1} if threshold > 0.97 else set())
    assert set(rows[:, 2].tolist()) == (set(range(n)) - {tiny}) | survivors
    np.testing.assert_array_equal(rows[:, 2], sorted(rows[:, 2], key=visit_key(scores)))
    if threshold > 0:  # the reference gives the overflowing box (3e38 x 3e38) a tiny IoU, > 0
        np.testing.assert_array_equal(rows, multiclass_reference(boxes[None], scores[None, None], threshold, 0.0))


def test_sub_resolution_box_follows_mmcv_arithmetic():
    """A box smaller than the float resolution of its coordinates after mmcv's centre shift has
    all four vertices on one point; mmcv's vertex-in-box test then passes every point of the other
    box (it acts as the band of box_iou_rotated.h), so its IoU with any box is inf, wherever that
    box is. Its area (1e-12) is above mmcv's 1e-14 guard, so mmcv's nms_rotated computes that,
    and so does the kernel; the eager op's exact IoU is ~0. Near the origin the vertices stay
    apart and the IoU is ~0 in both."""
    tiny = [50, 50, 1e-6, 1e-6, 0.3]
    scores = np.array([0.9, 0.8], f32)
    for far, kept in [([200, 200, 5, 5, 1.0], [0]), ([52, 50, 5, 5, 1.0], [0, 1])]:
        boxes = np.array([tiny, far], f32)
        np.testing.assert_array_equal(run_nms(boxes, scores, 0.99), kept, err_msg=str(far))
        np.testing.assert_array_equal(run_multiclass(boxes[None], scores[None, None], 0.99, 0.0)[:, 2], kept)
        eager = opbridge.ops.nms_rotated(torch.from_numpy(boxes), torch.from_numpy(scores), 0.99)
        np.testing.assert_array_equal(eager.numpy(), [0, 1])


def test_mmdeploy_graph_as_mmdeploy_writes_it():
    """mmdeploy's ONNXNMSRotatedOp.symbolic: mmdeploy::NMSRotated(boxes, scores) with float
    attributes iou_threshold and score_threshold, opset 11, inputs [B, N, 5] and [B, C, N] with
    dynamic dims, an int64 [K, 3] output. ORT 1.30 accepts IR versions 6 and 7 (and 3 to 10)."""
    node = helper.make_node("NMSRotated", ["boxes", "scores"], ["selected"], domain="mmdeploy",
                            iou_threshold=0.1, score_threshold=0.05)
    assert [a.type for a in node.attribute] == [onnx.AttributeProto.FLOAT] * 2
    graph = helper.make_graph(
        [node], "mmdeploy_nms_rotated",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", "num_boxes", 5]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", "num_classes", "num_boxes"])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["num_selected", 3])])
    rng = np.random.default_rng(9)
    boxes = np.stack([clustered(rng, 200)[0] for _ in range(2)])
    scores = rng.random((2, 3, 200)).astype(f32)
    expected = multiclass_reference(boxes, scores, f32(0.1), f32(0.05))
    assert len(expected) > 100
    for ir_version in (6, 7):
        opsets = [helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)]
        model = helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)
        onnx.checker.check_model(model)
        (selected,) = run(model, {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(selected, expected)
        (empty,) = run(model, {"boxes": np.zeros((1, 0, 5), f32), "scores": np.zeros((1, 3, 0), f32)})
        assert empty.shape == (0, 3) and empty.dtype == np.int64


# --- the eager PyTorch ops ---------------------------------------------------------------------------


@pytest.mark.parametrize("count,threshold", [(0, 0.5), (1, 0.5), (12, 0.0), (40, 0.1), (40, 0.5), (60, 0.9),
                                             (60, 1.0)])
def test_eager_ops_match_reference(count, threshold):
    rng = np.random.default_rng(count * 7 + int(threshold * 10))
    boxes, scores = clustered(rng, count, per_cluster=10)
    idxs = rng.integers(0, 3, count).astype(np.int64)
    tb, ts, ti = torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(idxs)

    expected = reference_nms(boxes, scores, threshold, strict=False)
    np.testing.assert_array_equal(opbridge.ops.nms_rotated(tb, ts, threshold).numpy(), expected)
    negated = boxes * f32([1, 1, 1, 1, -1])
    np.testing.assert_array_equal(opbridge.ops.nms_rotated(tb, ts, threshold, clockwise=False).numpy(),
                                  reference_nms(negated, scores, threshold, strict=False))
    expected = reference_nms(boxes, scores, threshold, strict=False, categories=idxs)
    np.testing.assert_array_equal(opbridge.ops.batched_nms_rotated(tb, ts, ti, threshold).numpy(), expected)
    np.testing.assert_array_equal(opbridge.ops.batched_nms_rotated(tb, ts, ti.int(), threshold).numpy(), expected)


@pytest.mark.parametrize("batch,classes,count,iou_threshold", [(1, 1, 0, 0.5), (0, 2, 5, 0.5), (2, 0, 5, 0.5),
                                                               (2, 3, 30, 0.0), (2, 3, 30, 0.5), (1, 2, 40, 1.0)])
def test_eager_multiclass_matches_reference(batch, classes, count, iou_threshold):
    rng = np.random.default_rng(batch + classes + count)
    boxes = batch_of_boxes(rng, batch, count, per_cluster=10)
    scores = rng.random((batch, classes, count)).astype(f32)
    if batch and classes and count:
        scores[0, 0, ::3] = 0.25
        scores[-1, -1, -1] = np.nan
    eager = opbridge.ops.multiclass_nms_rotated(torch.from_numpy(boxes), torch.from_numpy(scores), iou_threshold, 0.25)
    assert eager.dtype == torch.int64 and eager.shape[1:] == (3,)
    np.testing.assert_array_equal(eager.numpy(), multiclass_reference(boxes, scores, iou_threshold, 0.25))


def test_eager_nan_scores_and_ties():
    rng = np.random.default_rng(31)
    boxes, scores = clustered(rng, 40, per_cluster=10)
    scores[[4, 9, 30]] = np.nan
    scores[10:20] = 0.5
    for threshold in (0.0, 0.4):
        expected = reference_nms(boxes, scores, threshold, strict=False)
        eager = opbridge.ops.nms_rotated(torch.from_numpy(boxes), torch.from_numpy(scores), threshold)
        np.testing.assert_array_equal(eager.numpy(), expected)
        np.testing.assert_array_equal(run_nms(boxes, scores, threshold), expected)


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attrs,message", [
    ({"iou_threshold": 1.5}, "opbridge::NmsRotated: iou_threshold must lie in [0, 1], got 1.5"),
    ({"iou_threshold": -0.1}, "opbridge::NmsRotated: iou_threshold must lie in [0, 1], got -0.1"),
    ({"iou_threshold": NAN}, "opbridge::NmsRotated: iou_threshold must lie in [0, 1], got nan"),
    ({"iou_threshold": INF}, "opbridge::NmsRotated: iou_threshold must lie in [0, 1], got inf"),
])
def test_bad_attributes(attrs, message):
    assert message in session_error(nms_model(**attrs))


@pytest.mark.parametrize("identity", ["opbridge::MulticlassNmsRotated", "mmdeploy::NMSRotated"])
@pytest.mark.parametrize("attrs,message", [
    ({"iou_threshold": 1.5, "score_threshold": 0.1}, "iou_threshold must lie in [0, 1], got 1.5"),
    ({"iou_threshold": NAN}, "iou_threshold must lie in [0, 1], got nan"),
    ({"iou_threshold": 0.5, "score_threshold": NAN}, "score_threshold must not be NaN"),
])
def test_bad_multiclass_attributes(identity, attrs, message):
    assert f"{identity}: {message}" in session_error(nms_model(identity, **attrs))


def test_int_attributes_are_read_as_floats():
    boxes = np.array([[0, 0, 4, 2, 0], [0, 0, 4, 2, 0]], f32)
    scores = np.array([0.9, 0.8], f32)
    (keep,) = run(nms_model(iou_threshold=1), {"boxes": boxes, "scores": scores})
    np.testing.assert_array_equal(keep, [0])  # identical exact boxes: IoU exactly 1 >= 1
    (rows,) = run(nms_model("mmdeploy::NMSRotated", iou_threshold=0, score_threshold=0),
                  {"boxes": boxes[None], "scores": scores[None, None]})
    np.testing.assert_array_equal(rows, [[0, 0, 0]])


Z = np.zeros


@pytest.mark.parametrize("identity,feeds,message", [
    ("opbridge::NmsRotated", {"boxes": Z((3, 4), f32), "scores": Z(3, f32)},
     "opbridge::NmsRotated: boxes must have shape [N, 5] (cx, cy, w, h, theta), got shape [3, 4]"),
    ("opbridge::NmsRotated", {"boxes": Z(15, f32), "scores": Z(3, f32)},
     "opbridge::NmsRotated: boxes must have shape [N, 5] (cx, cy, w, h, theta), got shape [15]"),
    ("opbridge::NmsRotated", {"boxes": Z((1, 3, 5), f32), "scores": Z(3, f32)},
     "opbridge::NmsRotated: boxes must have shape [N, 5] (cx, cy, w, h, theta), got shape [1, 3, 5]"),
    ("opbridge::NmsRotated", {"boxes": Z((3, 5), f32), "scores": Z(4, f32)},
     "opbridge::NmsRotated: scores must have shape [N] with N = 3 (the number of boxes), got shape [4]"),
    ("opbridge::NmsRotated", {"boxes": Z((3, 5), f32), "scores": Z((3, 1), f32)},
     "opbridge::NmsRotated: scores must have shape [N] with N = 3 (the number of boxes), got shape [3, 1]"),
    ("opbridge::NmsRotated", {"boxes": Z((3, 5), f32), "scores": Z(3, f32), "idxs": Z(2, np.int64)},
     "opbridge::NmsRotated: idxs must have shape [N] with N = 3 (one category per box), got shape [2]"),
    ("opbridge::NmsRotated", {"boxes": Z((3, 5), f32), "scores": Z(3, f32), "idxs": Z((3, 1), np.int64)},
     "opbridge::NmsRotated: idxs must have shape [N] with N = 3 (one category per box), got shape [3, 1]"),
    ("opbridge::MulticlassNmsRotated", {"boxes": Z((2, 3, 5), f32), "scores": Z((1, 4, 3), f32)},
     "opbridge::MulticlassNmsRotated: scores must have shape [B, C, N] with B = 2 and N = 3 (as boxes), "
     "got shape [1, 4, 3]"),
    ("mmdeploy::NMSRotated", {"boxes": Z((2, 3, 5), f32), "scores": Z((2, 4, 5), f32)},
     "mmdeploy::NMSRotated: scores must have shape [B, C, N] with B = 2 and N = 3 (as boxes), got shape [2, 4, 5]"),
    ("mmdeploy::NMSRotated", {"boxes": Z((2, 3, 5), f32), "scores": Z((2, 3), f32)},
     "mmdeploy::NMSRotated: scores must have shape [B, C, N] with B = 2 and N = 3 (as boxes), got shape [2, 3]"),
    ("opbridge::MulticlassNmsRotated", {"boxes": Z((2, 3, 4), f32), "scores": Z((2, 1, 3), f32)},
     "opbridge::MulticlassNmsRotated: boxes must have shape [B, N, 5], got shape [2, 3, 4]"),
    ("mmdeploy::NMSRotated", {"boxes": Z((3, 5), f32), "scores": Z((1, 1, 3), f32)},
     "mmdeploy::NMSRotated: boxes must have shape [B, N, 5], got shape [3, 5]"),
])
def test_bad_inputs(identity, feeds, message):
    model = nms_model(identity, idxs="idxs" in feeds, iou_threshold=0.5)
    assert message in run_error(model, feeds)


def test_eager_errors():
    boxes, scores = torch.zeros(3, 5), torch.zeros(3)
    shapes = r"nms_rotated: boxes must be \[N, 5\] and scores \[N\], got "
    with pytest.raises(ValueError, match=shapes + r"\[3, 4\] and \[3\]"):
        opbridge.ops.nms_rotated(torch.zeros(3, 4), scores, 0.5)
    with pytest.raises(ValueError, match=shapes + r"\[3, 5\] and \[4\]"):
        opbridge.ops.nms_rotated(boxes, torch.zeros(4), 0.5)
    for threshold in (1.5, -0.1, NAN):
        with pytest.raises(ValueError, match=r"nms_rotated: iou_threshold must lie in \[0, 1\], got"):
            opbridge.ops.nms_rotated(boxes, scores, threshold)
        with pytest.raises(ValueError, match=r"nms_rotated: iou_threshold must lie in \[0, 1\], got"):
            opbridge.ops.batched_nms_rotated(boxes, scores, torch.zeros(3, dtype=torch.int64), threshold)
    with pytest.raises(ValueError, match=r"multiclass_nms_rotated: boxes must be \[B, N, 5\] and scores \[B, C, N\], "
                                         r"got \[2, 3, 5\] and \[1, 4, 3\]"):
        opbridge.ops.multiclass_nms_rotated(torch.zeros(2, 3, 5), torch.zeros(1, 4, 3), 0.5)
    with pytest.raises(ValueError, match=r"multiclass_nms_rotated: boxes must be \[B, N, 5\]"):
        opbridge.ops.multiclass_nms_rotated(torch.zeros(2, 3, 4), torch.zeros(2, 4, 3), 0.5)


# The eager ops accept what the ORT ops reject (found while writing these tests): an exported
# model then fails at session creation or run time although eager PyTorch ran it.


def test_eager_batched_rejects_idxs_of_the_wrong_length():
    """opbridge.ops.batched_nms_rotated does not check idxs: with 2 categories for 3 boxes it
    silently drops box 2 (returns [0, 1]); opbridge::NmsRotated raises."""
    boxes = torch.tensor([[0, 0, 4, 4, 0.0], [1, 0, 4, 4, 0.3], [10, 10, 2, 2, 0]])
    with pytest.raises(ValueError, match="idxs"):
        opbridge.ops.batched_nms_rotated(boxes, torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 1]), 0.1)


def test_eager_multiclass_rejects_bad_iou_threshold():
    """opbridge.ops.multiclass_nms_rotated does not check iou_threshold (1.5 or NaN suppresses
    nothing); MulticlassNmsRotated rejects it, as opbridge.ops.nms_rotated does."""
    boxes, scores = torch.zeros(1, 3, 5), torch.ones(1, 2, 3)
    for iou_threshold in (1.5, NAN):
        with pytest.raises(ValueError, match=r"iou_threshold must lie in \[0, 1\]"):
            opbridge.ops.multiclass_nms_rotated(boxes, scores, iou_threshold, 0.0)


def test_eager_multiclass_rejects_nan_score_threshold():
    """opbridge.ops.multiclass_nms_rotated does not check score_threshold (NaN returns no rows);
    MulticlassNmsRotated rejects it."""
    with pytest.raises(ValueError, match="score_threshold must not be NaN"):
        opbridge.ops.multiclass_nms_rotated(torch.zeros(1, 3, 5), torch.ones(1, 2, 3), 0.5, NAN)
