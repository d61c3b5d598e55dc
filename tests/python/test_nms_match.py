"""NMSMatch through the built library in ORT (opbridge::NmsMatch, mmdeploy::NMSMatch) and the eager
PyTorch op (opbridge.ops.nms_match), against a reference written here from the spec (mmdeploy's
kernel: its nms_match_iou over float32 scalars with the 1e-10 added in float64, its greedy loop,
its row rule) with the stable score order; and export round trips with both exporters and
compat="mmdeploy". Every output is integers: comparisons are exact."""

from __future__ import annotations

import itertools
import math

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
import opbridge.ops
from box_data import clustered_boxes
from graphs import EXPORTERS, cast_around, one_node_model, round_to, run, run_error
from opbridge import manifest
from opbridge.export import custom_nodes

f32 = np.float32
NAN, INF = float("nan"), float("inf")
INPUTS = ["boxes", "scores", "iou_threshold", "score_threshold"]
IDENTITIES = manifest.load()["nms_match"].identities


def match_model(identity="opbridge::NmsMatch"):
    return one_node_model(identity, {}, INPUTS, ["matches"])


def run_match(boxes, scores, iou_threshold, score_threshold, identity="opbridge::NmsMatch", threads=1, scalar=False):
    """The rows ORT computes; thresholds fed as [1] tensors (or [] with scalar)."""
    shape = () if scalar else (1,)
    feeds = {"boxes": boxes, "scores": scores, "iou_threshold": np.full(shape, iou_threshold, f32),
             "score_threshold": np.full(shape, score_threshold, f32)}
    (matches,) = run(match_model(identity), feeds, threads=threads)
    assert matches.dtype == np.int64 and matches.ndim == 2 and matches.shape[1] == 4
    return matches


# --- the reference -------------------------------------------------------------------------------


def spec_iou(bi, bj):
    """mmdeploy's nms_match_iou(box1 = bi, box2 = bj) over float32 scalars. Python's max(a, b) and
    min(a, b) keep a unless b is larger (smaller), as std::max and std::min do with NaN. mmdeploy's
    eps is a double: the union plus it and the quotient are float64, rounded to float32 on return."""
    with np.errstate(all="ignore"):
        w = max(f32(0), min(bi[2], bj[2]) - max(bi[0], bj[0]))
        h = max(f32(0), min(bi[3], bj[3]) - max(bi[1], bj[1]))
        area1 = (bi[2] - bi[0]) * (bi[3] - bi[1])
        area2 = (bj[2] - bj[0]) * (bj[3] - bj[1])
        inter = w * h
        return f32(np.float64(inter) / (np.float64(area1 + area2 - inter) + 1e-10))


def spec_iou_row(bi, bj):
    """spec_iou(bi, bj[k]) for every row of bj, with numpy's float32 arrays (the same IEEE
    operations; np.where reproduces std::max's and std::min's operand order)."""
    with np.errstate(all="ignore"):
        w = np.where(bj[:, 2] < bi[2], bj[:, 2], bi[2]) - np.where(bi[0] < bj[:, 0], bj[:, 0], bi[0])
        h = np.where(bj[:, 3] < bi[3], bj[:, 3], bi[3]) - np.where(bi[1] < bj[:, 1], bj[:, 1], bi[1])
        w = np.where(f32(0) < w, w, f32(0)).astype(f32)
        h = np.where(f32(0) < h, h, f32(0)).astype(f32)
        area1 = (bi[2] - bi[0]) * (bi[3] - bi[1])
        area2 = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])
        inter = w * h
        union = area1 + area2 - inter
        return (inter.astype(np.float64) / (union.astype(np.float64) + 1e-10)).astype(f32)


def visit_order(scores):
    """torch.sort(descending=True, stable=True): NaN first, then descending, ties (-0 and +0
    included) by lower index."""
    s = np.asarray(scores, np.float64)
    return sorted(range(len(s)), key=lambda i: (0, 0.0, i) if math.isnan(s[i]) else (1, -s[i], i))


def reference(boxes, scores, iou_threshold, score_threshold, scalar=False):
    """mmdeploy's NMSMatch from the spec: per batch and class, every box in visiting order; a box
    still standing is kept and knocks out every later standing box j with IoU >= iou_threshold;
    the kept box gives rows (b, c, i, j) for those j if its score is > score_threshold. Thresholds
    are float32, as the op receives them. scalar: spec_iou pair by pair (slow), else spec_iou_row."""
    boxes, scores = np.asarray(boxes, f32), np.asarray(scores, f32)
    iou_t, score_t = f32(iou_threshold), f32(score_threshold)
    rows = []
    for b, c in itertools.product(range(scores.shape[0]), range(scores.shape[1])):
        order = np.array(visit_order(scores[b, c]), np.int64)
        standing = np.ones(len(order), bool)  # by position in order
        for rank, i in enumerate(order.tolist()):
            if not standing[rank]:
                continue
            positions = rank + 1 + np.nonzero(standing[rank + 1:])[0]
            later = order[positions]
            if scalar:
                hit = np.array([spec_iou(boxes[b, i], boxes[b, j]) >= iou_t for j in later.tolist()], bool)
            else:
                hit = spec_iou_row(boxes[b, i], boxes[b, later]) >= iou_t
            hit = hit.reshape(-1)
            standing[positions[hit]] = False
            if scores[b, c, i] > score_t:
                rows += [(b, c, i, j) for j in later[hit].tolist()]
    return np.array(rows, np.int64).reshape(-1, 4)


def problem(rng, batch, classes, count):
    """boxes [batch, count, 4] and scores [batch, classes, count] with ties (every 5th score equal)."""
    boxes = np.array([clustered_boxes(rng, count, count // 6 + 1) for _ in range(batch)], f32)
    boxes = boxes.reshape(batch, count, 4)
    scores = rng.random((batch, classes, count)).astype(f32)
    if count:
        scores[..., ::5] = scores[..., :1]
    return boxes, scores


def test_reference_row_iou_is_the_scalar_iou():
    """spec_iou_row computes spec_iou, bit for bit, NaN and signed zeros included."""
    rng = np.random.default_rng(1)
    boxes = clustered_boxes(rng, 300, 20)
    odd = np.array([[4, 4, 0, 0], [2, 0, 2, 4], [NAN, 0, 4, 4], [0, 0, INF, 4], [-3e38, 0, 3e38, 4], [9, 1, 1, 9],
                    [0, 0, 1e-5, 1e-5], [0, 0, 0.0625, 0.03125], [0, 0, 0.03125, 0.03125]], f32)
    boxes = np.concatenate([boxes, odd])
    for i in list(range(0, 300, 37)) + list(range(300, len(boxes))):
        row = spec_iou_row(boxes[i], boxes)
        scalar = np.array([spec_iou(boxes[i], boxes[j]) for j in range(len(boxes))], f32)
        np.testing.assert_array_equal(row.view(np.uint32), scalar.view(np.uint32))


def test_reference_shortcut_is_the_scalar_loop():
    rng = np.random.default_rng(2)
    boxes, scores = problem(rng, 2, 2, 60)
    scores[0, 0, 3] = NAN
    boxes[0, 7] = [9, 9, 1, 1]
    for iou in (0.0, 0.3, 0.5):
        np.testing.assert_array_equal(reference(boxes, scores, iou, 0.3), reference(boxes, scores, iou, 0.3, scalar=True))


# --- the ORT op -----------------------------------------------------------------------------------

SWEEP = list(itertools.product([0, 1, 2, 10, 47, 48, 300, 2000], [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]))


@pytest.mark.parametrize("count,iou", SWEEP)
def test_matches_reference(count, iou):
    rng = np.random.default_rng(count * 10 + int(iou * 10))
    boxes, scores = problem(rng, 1, 2, count)
    expected = reference(boxes, scores, iou, 0.3)
    np.testing.assert_array_equal(run_match(boxes, scores, iou, 0.3), expected)
    if count >= 300 and iou < 1.0:  # suppression happens, and some j score at or below 0.3
        assert len(expected) > 20
        assert (scores[expected[:, 0], expected[:, 1], expected[:, 3]] <= f32(0.3)).any()


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("batch,classes,count", [(2, 3, 100), (3, 1, 40), (1, 15, 200)])
def test_batches_and_classes(identity, batch, classes, count):
    rng = np.random.default_rng(batch * 100 + classes)
    boxes, scores = problem(rng, batch, classes, count)
    scores[0, -1, 4] = NAN
    expected = reference(boxes, scores, 0.5, 0.05)
    assert len(np.unique(expected[:, :2], axis=0)) > 1
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.05, identity), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_half_reports_the_float32_ops_rows_on_the_half_values(identity, dtype):
    """float16 and bfloat16 boxes, scores and thresholds (one dtype, as a converted file holds them):
    exactly the rows the float32 op reports on the half values (thresholds included), which differ
    from those on the unrounded values (scores packed near 0.5 tie when rounded)."""
    rng = np.random.default_rng(49)
    boxes, scores = problem(rng, 2, 3, 500)
    scores[..., ::2] = f32(0.5) + scores[..., ::2] * f32(1e-3)
    feeds = {"boxes": boxes, "scores": scores, "iou_threshold": np.full((1,), 0.3, f32),
             "score_threshold": np.full((1,), 0.5, f32)}
    rounded = {n: round_to(v, dtype) for n, v in feeds.items()}
    model = one_node_model(identity, {}, INPUTS, ["matches"], input_types={n: dtype for n in INPUTS})
    if dtype == "bfloat16":
        (got,) = run(cast_around(model, dtype, set(INPUTS), set()), rounded)
    else:
        (got,) = run(model, {n: v.astype(np.float16) for n, v in rounded.items()})
    (exact,) = run(match_model(identity), rounded)
    np.testing.assert_array_equal(got, exact)
    assert len(exact) and not np.array_equal(got, run(match_model(identity), feeds)[0])


def test_one_box_and_nothing_suppressed():
    boxes = np.array([[[0, 0, 4, 4], [10, 10, 14, 14]]], f32)
    assert run_match(boxes[:, :1], np.ones((1, 2, 1), f32), 0.5, 0.05).shape == (0, 4)
    assert run_match(boxes, np.ones((1, 2, 2), f32), 0.5, 0.05).shape == (0, 4)


def test_rows_order_hand_worked():
    """Clusters A = {0, 2, 4} (identical boxes), B = {1, 3}, C = {5}. Visiting order 3 (0.9),
    4 (0.8), 1 (0.7), 2 (0.6), 0 (0.5), 5 (0.4): kept 3 takes 1; kept 4 takes 2, then 0."""
    a, b, c = [0, 0, 10, 10], [50, 50, 60, 60], [100, 0, 110, 10]
    boxes = np.array([[a, b, a, b, a, c]], f32)
    scores = np.array([[[0.5, 0.7, 0.6, 0.9, 0.8, 0.4]]], f32)
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.05), [[0, 0, 3, 1], [0, 0, 4, 2], [0, 0, 4, 0]])
    # The threshold applies to the kept box only (strictly): box 4 at 0.8 is not > 0.8; the boxes
    # it takes (0.6 and 0.5) score below any of these thresholds.
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.8), [[0, 0, 3, 1]])
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.79), [[0, 0, 3, 1], [0, 0, 4, 2], [0, 0, 4, 0]])
    assert run_match(boxes, scores, 0.5, 0.9).shape == (0, 4)


def test_score_exactly_at_the_threshold_is_not_reported():
    """score_i > score_threshold in float32: a score equal to the float32 threshold reports
    nothing, the next float up does."""
    boxes = np.array([[[0, 0, 4, 4], [0, 0, 4, 4]]], f32)
    at = f32(0.05)
    above = np.nextafter(at, f32(1))
    assert run_match(boxes, np.array([[[at, 0.01]]], f32), 0.5, 0.05).shape == (0, 4)
    np.testing.assert_array_equal(run_match(boxes, np.array([[[above, 0.01]]], f32), 0.5, 0.05), [[0, 0, 0, 1]])
    for scores in ([[[at, 0.01]]], [[[above, 0.01]]]):
        np.testing.assert_array_equal(run_match(boxes, np.array(scores, f32), 0.5, 0.05),
                                      reference(boxes, np.array(scores, f32), 0.5, 0.05))


def test_low_scoring_kept_boxes_still_suppress():
    """Box 1 (0.03, below the threshold) is kept and takes its twin 2 (0.02) silently; box 0
    reports box 3 (0.01), which scores below the threshold."""
    boxes = np.array([[[0, 0, 4, 4], [20, 20, 24, 24], [20, 20, 24, 24], [0, 0, 4, 4]]], f32)
    scores = np.array([[[0.9, 0.03, 0.02, 0.01]]], f32)
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.05), [[0, 0, 0, 3]])


def test_iou_is_reached_at_equality():
    """Box 1 is the left half of box 0: 1 / (2 + 1e-10) rounds to 0.5 in float32, which reaches
    0.5 (IoU >= threshold)."""
    boxes = np.array([[[0, 0, 2, 1], [0, 0, 1, 1]]], f32)
    scores = np.array([[[0.9, 0.8]]], f32)
    assert spec_iou(boxes[0, 0], boxes[0, 1]) == f32(0.5)
    np.testing.assert_array_equal(run_match(boxes, scores, 0.5, 0.05), [[0, 0, 0, 1]])
    assert run_match(boxes, scores, np.nextafter(f32(0.5), f32(1)), 0.05).shape == (0, 4)


def test_the_eps_is_added_in_float64():
    """Boxes of 2^-4 x 2^-5 and its left half: the IoU is exactly 0.5 without eps; 2^-9 + 1e-10
    in float64 lowers the quotient by 5e-8 relative, rounding it to the float below 0.5. Twin
    boxes of area ~1e-10 have an IoU of ~0.5."""
    below = np.nextafter(f32(0.5), f32(0))
    boxes = np.array([[[0, 0, 0.0625, 0.03125], [0, 0, 0.03125, 0.03125]]], f32)
    scores = np.array([[[0.9, 0.8]]], f32)
    assert spec_iou(boxes[0, 0], boxes[0, 1]) == below
    assert run_match(boxes, scores, 0.5, 0.05).shape == (0, 4)
    np.testing.assert_array_equal(run_match(boxes, scores, below, 0.05), [[0, 0, 0, 1]])
    tiny = np.array([[[0, 0, 1e-5, 1e-5], [0, 0, 1e-5, 1e-5]]], f32)
    assert abs(spec_iou(tiny[0, 0], tiny[0, 1]) - 0.5) < 1e-3
    np.testing.assert_array_equal(run_match(tiny, scores, 0.49, 0.05), [[0, 0, 0, 1]])
    assert run_match(tiny, scores, 0.51, 0.05).shape == (0, 4)
    for b in (boxes, tiny):
        eager = opbridge.ops.nms_match(torch.from_numpy(b), torch.from_numpy(scores), float(below), 0.05)
        np.testing.assert_array_equal(eager.numpy(), reference(b, scores, below, 0.05))


def test_score_ties_keep_the_lower_index_first():
    box = [0, 0, 4, 4]
    boxes = np.array([[box] * 4], f32)
    np.testing.assert_array_equal(run_match(boxes, np.full((1, 1, 4), 0.5, f32), 0.5, 0.05),
                                  [[0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 3]])
    zeros = np.array([[[0.0, -0.0, 0.0, -0.0]]], f32)  # -0 ties +0
    np.testing.assert_array_equal(run_match(boxes, zeros, 0.5, -1.0), [[0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 3]])
    rng = np.random.default_rng(8)
    boxes, _ = problem(rng, 1, 1, 120)
    scores = np.full((1, 2, 120), 0.5, f32)
    scores[0, 1, ::2] = -0.0
    scores[0, 1, 1::2] = 0.0
    for iou in (0.0, 0.3, 0.6):
        np.testing.assert_array_equal(run_match(boxes, scores, iou, -1.0), reference(boxes, scores, iou, -1.0))


@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7])
def test_nan_scores_come_first_and_report_nothing(iou):
    """A NaN-scored box is visited first (as torch.sort puts it) and suppresses its neighbours, but
    NaN > score_threshold is false: it gives no rows, whatever the threshold."""
    rng = np.random.default_rng(12)
    boxes, scores = problem(rng, 1, 2, 300)
    nan_boxes = rng.choice(300, 30, replace=False)
    scores[0, :, nan_boxes] = np.nan
    scores[0, 0, [7, 8]] = [np.inf, -np.inf]
    for score_threshold in (0.3, -INF):
        expected = reference(boxes, scores, iou, score_threshold)
        np.testing.assert_array_equal(run_match(boxes, scores, iou, score_threshold), expected)
        assert not np.isin(expected[:, 2], nan_boxes).any()
    twins = np.array([[[0, 0, 4, 4], [0, 0, 4, 4], [0, 0, 4, 4]]], f32)
    assert run_match(twins, np.array([[[0.5, NAN, 0.4]]], f32), 0.5, -INF).shape == (0, 4)


# Box 0, a twin of it scored last (7), and degenerate variants: inverted in x, inverted in both,
# zero width, NaN, infinite, overflowing area (3e38 x 4 is finite, 6e38 x 4 is not).
DEGENERATE = np.array([[[0, 0, 4, 4], [4, 0, 0, 4], [4, 4, 0, 0], [2, 0, 2, 4], [NAN, 0, 4, 4], [0, 0, INF, 4],
                        [-3e38, 0, 3e38, 4], [0, 0, 4, 4]]], f32)
DEGENERATE_SCORES = np.array([[[0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.1]]], f32)


@pytest.mark.parametrize("iou", [1e-6, 0.3, 1.0])
def test_degenerate_boxes_match_nothing_above_zero(iou):
    """Inverted and zero-size boxes have an intersection of 0 with every box (IoU +0 or -0), NaN
    boxes a NaN IoU, infinite-area boxes 0 or NaN: only box 0 takes its twin, box 7."""
    rows = run_match(DEGENERATE, DEGENERATE_SCORES, iou, 0.05)
    np.testing.assert_array_equal(rows, [[0, 0, 0, 7]])
    np.testing.assert_array_equal(rows, reference(DEGENERATE, DEGENERATE_SCORES, iou, 0.05))


def test_degenerate_boxes_at_zero_follow_mmdeploys_formula():
    """At iou_threshold 0, +0 and -0 reach it: box 0 takes every box whose IoU with it is a
    number: the inverted ones (0 over a negative union gives -0), the zero-width one, the
    infinite and the overflowing ones (0 over an infinite union) and the twin, but not the NaN
    one. An inverted box visited first takes the others just the same."""
    rows = run_match(DEGENERATE, DEGENERATE_SCORES, 0.0, 0.05)
    np.testing.assert_array_equal(rows, [[0, 0, 0, j] for j in (1, 2, 3, 5, 6, 7)])
    np.testing.assert_array_equal(rows, reference(DEGENERATE, DEGENERATE_SCORES, 0.0, 0.05))
    assert np.signbit(spec_iou(DEGENERATE[0, 0], np.array([9, 1, 1, 9], f32)))  # -64 + 16: a negative union
    inverted_first = np.array([[[9, 9, 1, 1], [0, 0, 4, 4], [2, 2, 3, 3]]], f32)
    np.testing.assert_array_equal(run_match(inverted_first, np.array([[[0.9, 0.8, 0.7]]], f32), 0.0, 0.05),
                                  [[0, 0, 0, 1], [0, 0, 0, 2]])


@pytest.mark.parametrize("iou", [0.0, 0.2, 0.5])
def test_random_degenerate_boxes(iou):
    """Clustered boxes with every 9th inverted, every 13th of zero width, and a few NaN and
    infinite coordinates, at sizes that use the grid."""
    rng = np.random.default_rng(int(iou * 10) + 40)
    boxes, scores = problem(rng, 1, 2, 500)
    boxes[0, ::9] = boxes[0, ::9][:, [2, 1, 0, 3]]
    boxes[0, ::13, 2] = boxes[0, ::13, 0]
    boxes[0, 5, 1], boxes[0, 50, 3], boxes[0, 77, 0] = NAN, INF, -INF
    expected = reference(boxes, scores, iou, 0.3)
    np.testing.assert_array_equal(run_match(boxes, scores, iou, 0.3), expected)
    np.testing.assert_array_equal(run_match(boxes, scores, iou, 0.3, threads=2), expected)


def test_thresholds_of_shape_one_or_scalar():
    rng = np.random.default_rng(6)
    boxes, scores = problem(rng, 1, 2, 80)
    expected = reference(boxes, scores, 0.4, 0.2)
    for identity in IDENTITIES:
        np.testing.assert_array_equal(run_match(boxes, scores, 0.4, 0.2, identity, scalar=True), expected)
        np.testing.assert_array_equal(run_match(boxes, scores, 0.4, 0.2, identity), expected)


def test_mmdeploy_graph_as_mmdeploy_writes_it():
    """mmdeploy's ONNXNMSMatchOp.symbolic: mmdeploy::NMSMatch(boxes, scores, iou_threshold,
    score_threshold), the thresholds float Constants of shape [1] (torch.tensor([x],
    dtype=torch.float)), no attributes, opset 11, inputs [B, N, 4] and [B, C, N] with dynamic dims,
    an int64 [K, 4] output. ORT 1.30 accepts IR versions 6 and 7."""
    constants = [helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.FLOAT, [1], [v]))
                 for name, v in (("iou", 0.5), ("score", 0.05))]
    node = helper.make_node("NMSMatch", ["boxes", "scores", "iou", "score"], ["matches"], domain="mmdeploy")
    graph = helper.make_graph(
        constants + [node], "mmdeploy_nms_match",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, ["batch", "num_boxes", 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", "num_classes", "num_boxes"])],
        [helper.make_tensor_value_info("matches", TensorProto.INT64, ["num_matches", 4])])
    rng = np.random.default_rng(9)
    boxes, scores = problem(rng, 2, 3, 200)
    expected = reference(boxes, scores, 0.5, 0.05)
    assert len(expected) > 50
    for ir_version in (6, 7):
        opsets = [helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)]
        model = helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)
        onnx.checker.check_model(model)
        (matches,) = run(model, {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(matches, expected)
        (empty,) = run(model, {"boxes": np.zeros((1, 0, 4), f32), "scores": np.zeros((1, 3, 0), f32)})
        assert empty.shape == (0, 4) and empty.dtype == np.int64


# --- errors -------------------------------------------------------------------------------------------

Z = np.zeros
GOOD = {"boxes": Z((1, 3, 4), f32), "scores": Z((1, 2, 3), f32), "iou_threshold": np.array([0.5], f32),
        "score_threshold": np.array([0.05], f32)}


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("change,message", [
    ({"iou_threshold": np.array([1.5], f32)}, "iou_threshold must lie in [0, 1], got 1.5"),
    ({"iou_threshold": np.array([-0.1], f32)}, "iou_threshold must lie in [0, 1], got -0.1"),
    ({"iou_threshold": np.array([NAN], f32)}, "iou_threshold must lie in [0, 1], got nan"),
    ({"iou_threshold": np.array(INF, f32)}, "iou_threshold must lie in [0, 1], got inf"),
    ({"score_threshold": np.array([NAN], f32)}, "score_threshold must not be NaN"),
    ({"score_threshold": np.array(NAN, f32)}, "score_threshold must not be NaN"),
    ({"iou_threshold": np.array([0.5, 0.6], f32)},
     "iou_threshold must have shape [1] or [] (one value), got shape [2]"),
    ({"iou_threshold": np.zeros(0, f32)}, "iou_threshold must have shape [1] or [] (one value), got shape [0]"),
    ({"score_threshold": np.zeros((1, 1), f32)},
     "score_threshold must have shape [1] or [] (one value), got shape [1, 1]"),
    ({"boxes": Z((1, 3, 5), f32)}, "boxes must have shape [B, N, 4], got shape [1, 3, 5]"),
    ({"boxes": Z((3, 4), f32)}, "boxes must have shape [B, N, 4], got shape [3, 4]"),
    ({"scores": Z((1, 2, 4), f32)},
     "scores must have shape [B, C, N] with B = 1 and N = 3 (as boxes), got shape [1, 2, 4]"),
    ({"scores": Z((2, 2, 3), f32)},
     "scores must have shape [B, C, N] with B = 1 and N = 3 (as boxes), got shape [2, 2, 3]"),
    ({"scores": Z((1, 3), f32)}, "scores must have shape [B, C, N] with B = 1 and N = 3 (as boxes), got shape [1, 3]"),
])
def test_bad_inputs(identity, change, message):
    assert f"{identity}: {message}" in run_error(match_model(identity), {**GOOD, **change})


def test_the_shapes_are_checked_before_the_thresholds():
    feeds = {**GOOD, "boxes": Z((1, 3, 5), f32), "iou_threshold": np.array([2.0], f32)}
    assert "boxes must have shape [B, N, 4]" in run_error(match_model(), feeds)


def test_eager_errors():
    boxes, scores = torch.zeros(1, 3, 4), torch.zeros(1, 2, 3)
    with pytest.raises(ValueError, match=r"nms_match: boxes must be \[B, N, 4\] and scores \[B, C, N\], "
                                         r"got \[1, 3, 5\] and \[1, 2, 3\]"):
        opbridge.ops.nms_match(torch.zeros(1, 3, 5), scores)
    with pytest.raises(ValueError, match=r"got \[1, 3, 4\] and \[1, 2, 4\]"):
        opbridge.ops.nms_match(boxes, torch.zeros(1, 2, 4))
    for iou in (1.5, -0.1, NAN):
        with pytest.raises(ValueError, match=r"nms_match: iou_threshold must lie in \[0, 1\], got"):
            opbridge.ops.nms_match(boxes, scores, iou)
    with pytest.raises(ValueError, match="nms_match: score_threshold must not be NaN"):
        opbridge.ops.nms_match(boxes, scores, 0.5, NAN)


# --- the eager PyTorch op -----------------------------------------------------------------------------


@pytest.mark.parametrize("batch,classes,count,iou", [(1, 1, 0, 0.5), (0, 2, 5, 0.5), (2, 0, 5, 0.5), (1, 2, 1, 0.5),
                                                     (2, 3, 40, 0.0), (2, 3, 60, 0.1), (1, 2, 120, 0.5),
                                                     (1, 2, 80, 1.0)])
def test_eager_matches_reference(batch, classes, count, iou):
    rng = np.random.default_rng(batch + classes + count)
    boxes, scores = problem(rng, batch, classes, count)
    if batch and classes and count > 4:
        scores[0, 0, 3] = NAN
        boxes[0, 2] = boxes[0, 2, [2, 3, 0, 1]]  # inverted
    eager = opbridge.ops.nms_match(torch.from_numpy(boxes), torch.from_numpy(scores), iou, 0.3)
    assert eager.dtype == torch.int64 and tuple(eager.shape[1:]) == (4,)
    expected = reference(boxes, scores, iou, 0.3)
    np.testing.assert_array_equal(eager.numpy(), expected)
    np.testing.assert_array_equal(run_match(boxes, scores, iou, 0.3), expected)


def test_eager_defaults_are_mmdeploys():
    """multiclass_nms_match's defaults: iou_threshold 0.1, score_threshold 0.05."""
    rng = np.random.default_rng(21)
    boxes, scores = problem(rng, 1, 2, 60)
    eager = opbridge.ops.nms_match(torch.from_numpy(boxes), torch.from_numpy(scores))
    np.testing.assert_array_equal(eager.numpy(), reference(boxes, scores, 0.1, 0.05))


def test_eager_degenerate_boxes():
    for iou in (0.0, 0.3):
        eager = opbridge.ops.nms_match(torch.from_numpy(DEGENERATE), torch.from_numpy(DEGENERATE_SCORES), iou, 0.05)
        np.testing.assert_array_equal(eager.numpy(), reference(DEGENERATE, DEGENERATE_SCORES, iou, 0.05))


# --- export round trips ---------------------------------------------------------------------------------
DYNAMIC = {"boxes": {0: "batch", 1: "boxes"}, "scores": {0: "batch", 1: "classes", 2: "boxes"}}


class NmsMatch(torch.nn.Module):
    def forward(self, boxes, scores):
        return opbridge.ops.nms_match(boxes, scores, 0.4, 0.2)


def export_inputs(batch, classes, count, seed):
    boxes, scores = problem(np.random.default_rng(seed), batch, classes, count)
    return torch.from_numpy(boxes), torch.from_numpy(scores)


def constant_value(proto, name):
    """The value of a graph's constant `name`: an initializer or a Constant node's output."""
    for tensor in proto.graph.initializer:
        if tensor.name == name:
            return onnx.numpy_helper.to_array(tensor)
    for node in proto.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return onnx.numpy_helper.to_array(node.attribute[0].t)
    raise AssertionError(f"{name} is not a constant of the graph")


def check_node(proto, domain, op_type):
    node = next(n for n in proto.graph.node if n.domain == domain)
    assert node.op_type == op_type and len(node.input) == 4 and len(node.attribute) == 0
    for name, value in zip(node.input[2:], (0.4, 0.2)):
        constant = constant_value(proto, name)
        assert constant.dtype == np.float32 and constant.shape == (1,) and constant[0] == f32(value)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_round_trip(exporter):
    model = NmsMatch()
    proto = opbridge.export(model, export_inputs(2, 3, 40, 0), exporter=exporter, dynamic_axes=DYNAMIC)
    assert custom_nodes(proto) == ["opbridge::NmsMatch"]
    check_node(proto, "opbridge", "NmsMatch")
    session = opbridge.create_session(proto)
    for shape, seed in [((2, 3, 40), 0), ((1, 5, 150), 1), ((2, 3, 1), 2), ((2, 3, 0), 3), ((1, 0, 7), 4)]:
        boxes, scores = export_inputs(*shape, seed)
        expected = model(boxes, scores)
        if shape[2] >= 40:
            assert len(expected) > 5
        (actual,) = session.run(None, {"boxes": boxes.numpy(), "scores": scores.numpy()})
        assert actual.dtype == np.int64 and actual.shape[1] == 4
        np.testing.assert_array_equal(actual, expected.numpy(), err_msg=str(shape))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_compat_mmdeploy(exporter):
    """compat="mmdeploy" writes mmdeploy::NMSMatch (same inputs and output, no attributes)."""
    model = NmsMatch()
    args = export_inputs(2, 3, 60, 5)
    proto = opbridge.export(model, args, exporter=exporter, compat="mmdeploy")
    assert custom_nodes(proto) == ["mmdeploy::NMSMatch"]
    assert "opbridge" not in [o.domain for o in proto.opset_import] and \
        ("mmdeploy", 1) in [(o.domain, o.version) for o in proto.opset_import]
    check_node(proto, "mmdeploy", "NMSMatch")
    (actual,) = opbridge.create_session(proto).run(None, {"boxes": args[0].numpy(), "scores": args[1].numpy()})
    np.testing.assert_array_equal(actual, model(*args).numpy())


def test_export_has_no_mmcv_identity():
    with pytest.raises(ValueError, match=r"opbridge::NmsMatch has no mmcv identity .*\(mmcv has none\)"):
        opbridge.export(NmsMatch(), export_inputs(1, 2, 10, 0), exporter="legacy", compat="mmcv")


@pytest.mark.parametrize("identity", IDENTITIES)
def test_problem_count_is_bounded_before_allocating(identity):
    """No boxes, 2^32 classes: the inputs are empty, and one problem per (batch, class) was
    allocated for anyway; the failed allocation aborted the process (issue 11)."""
    feeds = {"boxes": np.zeros((1, 0, 4), f32), "scores": np.zeros((1, 2**32, 0), f32),
             "iou_threshold": np.full((1,), 0.5, f32), "score_threshold": np.full((1,), 0.1, f32)}
    message = run_error(match_model(identity), feeds)
    assert f"{identity}: B * C (1 x 4294967296 from scores [1, 4294967296, 0]) must be at most 2147483647" in message


@pytest.mark.parametrize("identity", IDENTITIES)
def test_no_boxes_in_many_problems_is_immediate(identity):
    """2^24 + 1 images x 17 classes and no boxes: no pairs, at once (the fuzzer's one hang: a
    scratch entry and a pass per empty problem)."""
    feeds = {"boxes": np.zeros((2**24 + 1, 0, 4), f32), "scores": np.zeros((2**24 + 1, 17, 0), f32),
             "iou_threshold": np.full((1,), 0.5, f32), "score_threshold": np.full((1,), 0.1, f32)}
    (matches,) = run(match_model(identity), feeds)
    assert matches.shape == (0, 4) and matches.dtype == np.int64
