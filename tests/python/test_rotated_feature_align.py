"""Rotated feature align through the built library in ORT (opbridge::RotatedFeatureAlign,
mmcv::MMCVRotatedFeatureAlign) and the eager PyTorch op (opbridge.ops.rotated_feature_align),
against a float64 reference written here from the spec (section 5.9 of the compatibility
reference and the op's notes); mmcv's graph; export round trips with both exporters and
compat="mmcv"."""

from __future__ import annotations

import math
import re

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
import opbridge.ops
from graphs import (EXPORTERS, assert_close, cast_around, one_node_model, round_to, run, run_error, run_half,
                    session_error)
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan, tolerance
from opbridge.export import custom_nodes

f32 = np.float32
NAN, INF = float("nan"), float("inf")
INPUTS = ["features", "best_rbboxes"]
IDENTITIES = manifest.load()["rotated_feature_align"].identities


def align_model(spatial_scale, points, identity="opbridge::RotatedFeatureAlign"):
    return one_node_model(identity, {"spatial_scale": spatial_scale, "points": points}, INPUTS, ["output"])


def run_align(features, boxes, spatial_scale, points, identity="opbridge::RotatedFeatureAlign"):
    (out,) = run(align_model(spatial_scale, points, identity), {"features": features, "best_rbboxes": boxes})
    assert out.dtype == np.float32 and out.shape == features.shape
    return out


# --- the reference -------------------------------------------------------------------------------


def reference_sample(plane: np.ndarray, y: float, x: float) -> np.ndarray:
    """Every channel of plane [C, H, W] sampled at (y, x) by RoIAlign's bilinear rules, in float64:
    0 outside [-1, H] x [-1, W]; else NaN for a NaN coordinate; else coordinates below 0 read as
    0, beyond the last row or column as that row or column, and the four neighbours are weighted
    by their distances."""
    _, h, w = plane.shape
    if y < -1 or y > h or x < -1 or x > w:  # False for NaN
        return np.zeros(plane.shape[0])
    if math.isnan(y) or math.isnan(x):
        return np.full(plane.shape[0], np.nan)
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * plane[:, y0, x0] + (1 - ly) * lx * plane[:, y0, x1]
            + ly * (1 - lx) * plane[:, y1, x0] + ly * lx * plane[:, y1, x1])


def reference_points(box, spatial_scale: float, points: int) -> list[tuple[float, float]]:
    """The (y, x) sample points of one box (y, x, w, h, angle), in float64: the centre, then the
    corners c + w + h, c - w + h, c - w - h, c + w - h, where the w vector is (cos a, sin a) * w/2
    and the h vector (-sin a, cos a) * h/2, in (x, y)."""
    y, x, bw, bh, angle = (float(v) for v in box)
    cy, cx = y * spatial_scale, x * spatial_scale
    result = [(cy, cx)]
    if points == 5:
        with np.errstate(invalid="ignore"):
            cos, sin = float(np.cos(angle)), float(np.sin(angle))
            half_w, half_h = bw * spatial_scale / 2, bh * spatial_scale / 2
            w_vec = (cos * half_w, sin * half_w)    # (x, y)
            h_vec = (-sin * half_h, cos * half_h)
            for sw, sh in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
                result.append((cy + sw * w_vec[1] + sh * h_vec[1], cx + sw * w_vec[0] + sh * h_vec[0]))
    return result


def reference(features, boxes, spatial_scale: float, points: int) -> np.ndarray:
    """out[n, :, h, w] = features[n, :, h, w] + the samples of features[n] at the points of
    boxes[n, h, w], in float64 (spatial_scale taken as the float32 the node carries)."""
    f = np.asarray(features, np.float64)
    scale = float(f32(spatial_scale))
    out = f.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        for n in range(f.shape[0]):
            for h in range(f.shape[2]):
                for w in range(f.shape[3]):
                    for y, x in reference_points(boxes[n, h, w], scale, points):
                        out[n, :, h, w] += reference_sample(f[n], y, x)
    return out


def problem(rng, n, c, h, w, spatial_scale, angles=None):
    """Random features and boxes in image coordinates: centres over the map and a margin past
    every side, sizes up to 1.5 times the map, angles in [-7, 7] (or drawn from `angles`)."""
    features = rng.standard_normal((n, c, h, w)).astype(f32)
    scale = 1 / spatial_scale
    boxes = np.empty((n, h, w, 5), f32)
    boxes[..., 0] = rng.uniform(-0.4 * h - 2, 1.4 * h + 2, (n, h, w)) * scale
    boxes[..., 1] = rng.uniform(-0.4 * w - 2, 1.4 * w + 2, (n, h, w)) * scale
    boxes[..., 2] = rng.uniform(0, 1.5 * w, (n, h, w)) * scale
    boxes[..., 3] = rng.uniform(0, 1.5 * h, (n, h, w)) * scale
    boxes[..., 4] = rng.uniform(-7, 7, (n, h, w)) if angles is None else rng.choice(angles, (n, h, w))
    return features, boxes


def eager(features, boxes, spatial_scale, points):
    return opbridge.ops.rotated_feature_align(torch.from_numpy(features), torch.from_numpy(boxes), spatial_scale,
                                              points).numpy()


def test_reference_closed_form():
    """The reference on cases worked by hand: a linear field f(y, x) = 1 + 2y + 3x is reproduced
    exactly by bilinear sampling inside the map, and the 4 corners of any box lie symmetrically
    about its centre, so with points = 5 a box inside the map adds 5 f(centre)."""
    h, w = 8, 9
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    features = (1 + 2 * ys + 3 * xs)[None, None].astype(f32)
    boxes = np.zeros((1, h, w, 5), f32)
    boxes[0, 2, 3] = (12, 16, 4, 6, 0.7)  # centre (3, 4) at spatial_scale 1/4; corners within 1 px
    expected = reference(features, boxes, 0.25, 5)
    assert expected[0, 0, 2, 3] == pytest.approx(features[0, 0, 2, 3] + 5 * (1 + 2 * 3 + 3 * 4))
    assert expected[0, 0, 0, 0] == pytest.approx(features[0, 0, 0, 0] + 5 * 1)  # box 0: the point (0, 0), 5 times
    boxes[0, 2, 3] = (-100, 16, 0, 0, 0)  # the centre outside: nothing added
    assert reference(features, boxes, 0.25, 1)[0, 0, 2, 3] == features[0, 0, 2, 3]


# --- sweeps through ORT ---------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("points", [1, 5])
@pytest.mark.parametrize("spatial_scale", [1 / 8, 1 / 4])
@pytest.mark.parametrize("shape", [(2, 3, 9, 11), (1, 4, 16, 7)])
def test_matches_reference(identity, points, spatial_scale, shape):
    rng = np.random.default_rng(sum(shape) + points + int(1 / spatial_scale))
    features, boxes = problem(rng, *shape, spatial_scale)
    expected = reference(features, boxes, spatial_scale, points)
    assert_close(run_align(features, boxes, spatial_scale, points, identity), expected, "float64_reference",
                 "rotated_feature_align")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_half_is_the_float32_result_rounded_once(identity, dtype):
    """float16 and bfloat16 features and boxes: bit for bit the float32 op's output on the half values,
    rounded once, for 1 and 5 points; and the float64 reference on the half values, rounded, within
    the half tolerance."""
    rng = np.random.default_rng(51)
    features, boxes = problem(rng, 2, 6, 20, 24, 0.5)
    for points in (1, 5):
        attrs = {"spatial_scale": 0.5, "points": points}
        model = one_node_model(identity, attrs, INPUTS, ["output"], input_types={n: dtype for n in INPUTS})
        if dtype == "bfloat16":
            model = cast_around(model, dtype, set(INPUTS), {"output"})
        feeds = {"features": features, "best_rbboxes": boxes}
        (got,) = run_half(model, feeds, dtype)
        rounded = {n: round_to(v, dtype) for n, v in feeds.items()}
        (exact,) = run(align_model(0.5, points, identity), rounded)
        assert same_bits_but_nan(round_to(exact, dtype), got)
        tol = tolerance("half", dtype)
        expected = reference(rounded["features"], rounded["best_rbboxes"], 0.5, points)
        np.testing.assert_allclose(got, round_to(expected, dtype), rtol=tol.rtol, atol=tol.atol)


@pytest.mark.parametrize("points", [1, 5])
def test_special_angles(points):
    """0 and +-pi/2 (cos or sin of the float32 angle is 0 or 1, nearly), pi, and angles beyond
    +-2 pi, which only wrap around."""
    rng = np.random.default_rng(11 + points)
    angles = [0.0, math.pi / 2, -math.pi / 2, math.pi, 2 * math.pi + 0.4, -2 * math.pi - 1.1, 9.0, -13.0, 100.0]
    features, boxes = problem(rng, 2, 3, 12, 10, 1 / 8, angles=np.array(angles, f32))
    expected = reference(features, boxes, 1 / 8, points)
    assert_close(run_align(features, boxes, 1 / 8, points), expected, "float64_reference", "rotated_feature_align")
    # An angle and the same angle plus 2 pi put the corners at the same places (up to rounding).
    shifted = boxes.copy()
    shifted[..., 4] += f32(2 * math.pi)
    assert_close(run_align(features, shifted, 1 / 8, points), expected, "float64_reference", "rotated_feature_align")


def test_angle_zero_and_half_pi_pick_the_expected_corners():
    """A field that is 1 at one pixel only: angle 0 puts corner c+w+h at (y + h/2, x + w/2);
    angle pi/2 turns the w vector to +y and the h vector to -x, so c+w+h is (y + w/2, x - h/2)."""
    features = np.zeros((1, 1, 12, 12), f32)
    features[0, 0, 7, 6] = 1.0
    boxes = np.zeros((1, 12, 12, 5), f32)
    boxes[0, 0, 0] = (5, 5, 2, 4, 0)  # corners (7, 6), (7, 4), (3, 4), (3, 6)
    boxes[0, 0, 1] = (5, 8, 4, 4, math.pi / 2)  # corners (7, 6), (3, 6), (3, 10), (7, 10)
    out = run_align(features, boxes, 1.0, 5)
    assert out[0, 0, 0, 0] == pytest.approx(1.0, abs=1e-6)
    assert out[0, 0, 0, 1] == pytest.approx(1.0, abs=1e-6)
    assert run_align(features, boxes, 1.0, 1)[0, 0, 0, 0] == 0.0  # the centre alone reads 0
    assert_close(out, reference(features, boxes, 1.0, 5), "float64_reference", "rotated_feature_align")


@pytest.mark.parametrize("points", [1, 5])
def test_points_partly_and_wholly_outside(points):
    rng = np.random.default_rng(21)
    features, boxes = problem(rng, 2, 3, 8, 9, 1 / 4)
    h, w = 8, 9
    # Pixel rows 0-1: boxes astride the borders (centres near -1, 0, H - 1, H and the same for x).
    centres_y = np.array([-1.2, -0.5, 0.3, h - 1.5, h - 0.7, h + 0.4], f32)
    centres_x = np.array([-1.3, -0.6, 0.2, w - 1.4, w - 0.8, w + 0.5], f32)
    boxes[:, :2, :, 0] = rng.choice(centres_y, (2, 2, w)) * 4
    boxes[:, :2, :, 1] = rng.choice(centres_x, (2, 2, w)) * 4
    # Pixel rows 2-3: boxes wholly outside (every corner too): nothing is added.
    boxes[:, 2:4, :, 0] = -40 * 4
    boxes[:, 2:4, :, 2:4] = 8
    boxes[:, 3, :, 0], boxes[:, 3, :, 1] = 5 * 4, (w + 3) * 4
    out = run_align(features, boxes, 1 / 4, points)
    np.testing.assert_array_equal(out[:, :, 2:4], features[:, :, 2:4])
    expected = reference(features, boxes, 1 / 4, points)
    assert_close(out, expected, "float64_reference", "rotated_feature_align")
    assert not np.allclose(out[:, :, :2], features[:, :, :2])  # the astride boxes did read the map


def test_exact_borders():
    """-1 and H (W) are inside, like RoIAlign: the point reads the first or last row or column;
    beyond them it reads 0. Centres exactly representable, so float32 and float64 agree."""
    features = np.arange(1, 1 + 2 * 4 * 5, dtype=f32).reshape(1, 2, 4, 5)
    boxes = np.zeros((1, 4, 5, 5), f32)
    cases = [(-1, 2), (4, 2), (1, -1), (1, 5), (-1, -1), (4, 5), (-1.0001, 2), (4.0001, 2), (1, -1.0001), (1, 5.0001),
             (-0.5, 3.5), (3.5, 4.5)]
    for k, (y, x) in enumerate(cases):
        boxes[0, k // 5, k % 5, :2] = (y, x)
    out = run_align(features, boxes, 1.0, 1)
    assert_close(out, reference(features, boxes, 1.0, 1), "float64_reference", "rotated_feature_align")
    plane = features[0, 0]
    np.testing.assert_array_equal(out[0, 0, 0, :2] - features[0, 0, 0, :2], [plane[0, 2], plane[3, 2]])
    np.testing.assert_array_equal(out[0, 0, 1, 1:] - features[0, 0, 1, 1:], [0, 0, 0, 0])  # just beyond: 0


@pytest.mark.parametrize("points", [1, 5])
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 3, 1, 7), (2, 3, 6, 1), (1, 1, 1, 5)])
def test_size_one_axes(points, shape):
    rng = np.random.default_rng(sum(shape))
    features, boxes = problem(rng, *shape, 1 / 4)
    expected = reference(features, boxes, 1 / 4, points)
    assert_close(run_align(features, boxes, 1 / 4, points), expected, "float64_reference", "rotated_feature_align")
    assert_close(eager(features, boxes, 1 / 4, points), expected, "float64_reference", "rotated_feature_align")


@pytest.mark.parametrize("shape", [(0, 3, 4, 5), (2, 0, 4, 5), (2, 3, 0, 5), (2, 3, 4, 0), (0, 0, 0, 0)])
def test_eager_empty_axes(shape):
    """No output element; with H or W = 0 there is no pixel, so no box and nothing to read."""
    features = np.zeros(shape, f32)
    boxes = np.zeros((shape[0], shape[2], shape[3], 5), f32)
    for points in (1, 5):
        assert eager(features, boxes, 0.125, points).shape == shape


def test_batches_use_their_own_boxes_and_planes():
    rng = np.random.default_rng(31)
    features, boxes = problem(rng, 2, 2, 6, 6, 1 / 8)
    swapped = run_align(features[::-1].copy(), boxes[::-1].copy(), 1 / 8, 5)
    np.testing.assert_array_equal(swapped, run_align(features, boxes, 1 / 8, 5)[::-1])
    assert_close(swapped, reference(features[::-1], boxes[::-1], 1 / 8, 5), "float64_reference",
                 "rotated_feature_align")


@pytest.mark.parametrize("points", [1, 5])
def test_non_finite_boxes_and_features(points):
    """The range test comes first (an infinite coordinate is outside and reads 0, and so does a
    point whose other coordinate is out of range when one is NaN); otherwise a NaN coordinate
    makes the output NaN. NaN and infinite features propagate through every neighbour read."""
    rng = np.random.default_rng(41 + points)
    features, boxes = problem(rng, 2, 3, 8, 8, 1 / 8)
    specials = [NAN, INF, -INF]
    for k in range(24):
        n, y, x = k % 2, k // 3 % 8, (k * 5) % 8
        boxes[n, y, x, k % 5] = specials[k % 3]
    boxes[0, 7, 7] = (NAN, 1000, 16, 16, 0)     # NaN y, x far beyond W: outside, 0
    boxes[1, 7, 7] = (16, 16, 16, 16, NAN)      # NaN angle: used only by points = 5
    boxes[1, 6, 6] = (16, 16, INF, 8, 0)        # w = inf at angle 0: corners (NaN, +-inf)
    features[0, 1, 3, 4], features[1, 2, 5, 5], features[1, 0, 0, 0] = NAN, INF, -INF
    out = run_align(features, boxes, 1 / 8, points)
    expected = reference(features, boxes, 1 / 8, points)
    assert np.isnan(expected).any() and np.isfinite(expected).any()
    assert_close(out, expected, "float64_reference", "rotated_feature_align")
    np.testing.assert_array_equal(out, eager(features, boxes, 1 / 8, points))
    np.testing.assert_array_equal(out[0, :, 7, 7], features[0, :, 7, 7])
    assert np.isnan(out[1, :, 7, 7]).all() == (points == 5)
    assert np.isfinite(out[1, :, 6, 6]).all()  # the corners are outside, the centre is finite


def test_mmcv_test_data():
    """mmcv's own test (tests/test_ops/test_rotated_feature_align.py, open-mmlab/mmcv, CUDA
    kernel): its inputs, and its expected outputs at its tolerance (printed to 4 decimals), as an
    outside check of the box layout (y first) and the sampling rules."""
    features = np.array(MMCV_FEATURES, f32).reshape(2, 3, 4, 4)
    boxes = np.array(MMCV_BOXES, f32).reshape(2, 4, 4, 5)
    expected = np.array(MMCV_EXPECTED, f32).reshape(2, 3, 4, 4)
    out = run_align(features, boxes, 1 / 8, 1, "mmcv::MMCVRotatedFeatureAlign")
    np.testing.assert_allclose(out, expected, rtol=1e-2, atol=1e-4)  # mmcv's allclose(output, expected, 1e-2)
    assert_close(out, reference(features, boxes, 1 / 8, 1), "float64_reference", "rotated_feature_align")


def test_mmcv_graph_as_mmcv_writes_it():
    """mmcv's RotatedFeatureAlignFunction.symbolic: mmcv::MMCVRotatedFeatureAlign(features,
    best_rbboxes) with spatial_scale (float) and points (int) always written, no other
    attribute; mmcv's tests export at opset 11. ORT accepts IR versions 6 and 7."""
    rng = np.random.default_rng(61)
    features, boxes = problem(rng, 2, 4, 10, 12, 1 / 8)
    for points in (1, 5):
        node = helper.make_node("MMCVRotatedFeatureAlign", INPUTS, ["output"], domain="mmcv",
                                spatial_scale=1 / 8, points=points)
        graph = helper.make_graph(
            [node], "mmcv_rotated_feature_align",
            [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["n", 4, "h", "w"]),
             helper.make_tensor_value_info("best_rbboxes", TensorProto.FLOAT, ["n", "h", "w", 5])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["n", 4, "h", "w"])])
        expected = reference(features, boxes, 1 / 8, points)
        for ir_version in (6, 7):
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmcv", 1)],
                                      ir_version=ir_version)
            onnx.checker.check_model(model)
            (out,) = run(model, {"features": features, "best_rbboxes": boxes})
            assert_close(out, expected, "float64_reference", "rotated_feature_align")


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("attrs,message", [
    ({"spatial_scale": 0.0, "points": 1}, "spatial_scale must be a finite number > 0, got 0"),
    ({"spatial_scale": -0.125, "points": 1}, "spatial_scale must be a finite number > 0, got -0.125"),
    ({"spatial_scale": NAN, "points": 1}, "spatial_scale must be a finite number > 0, got nan"),
    ({"spatial_scale": INF, "points": 5}, "spatial_scale must be a finite number > 0, got inf"),
])
def test_bad_attributes(identity, attrs, message):
    assert f"{identity}: {message}" in session_error(one_node_model(identity, attrs, INPUTS, ["output"]))


def test_an_int_spatial_scale_is_accepted():
    features = np.ones((1, 1, 2, 2), f32)
    boxes = np.zeros((1, 2, 2, 5), f32)
    (out,) = run(one_node_model("mmcv::MMCVRotatedFeatureAlign", {"spatial_scale": 1, "points": 1}, INPUTS, ["output"]),
                 {"features": features, "best_rbboxes": boxes})
    np.testing.assert_array_equal(out, features + 1)


Z = np.zeros


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("features,boxes,message", [
    (Z((2, 3, 4), f32), Z((2, 3, 4, 5), f32), "features must have rank 4 [N, C, H, W], got shape [2, 3, 4]"),
    (Z((1, 2, 3, 4, 5), f32), Z((1, 3, 4, 5), f32), "features must have rank 4 [N, C, H, W], got shape [1, 2, 3, 4, 5]"),
    (Z((2, 3, 4, 6), f32), Z((2, 4, 5, 5), f32),
     "best_rbboxes must have shape [N, H, W, 5] = [2, 4, 6, 5] (N, H and W of features [2, 3, 4, 6]), got shape [2, 4, 5, 5]"),
    (Z((2, 3, 4, 6), f32), Z((1, 4, 6, 5), f32),
     "best_rbboxes must have shape [N, H, W, 5] = [2, 4, 6, 5] (N, H and W of features [2, 3, 4, 6]), got shape [1, 4, 6, 5]"),
    (Z((2, 3, 4, 6), f32), Z((2, 6, 4, 5), f32),
     "best_rbboxes must have shape [N, H, W, 5] = [2, 4, 6, 5] (N, H and W of features [2, 3, 4, 6]), got shape [2, 6, 4, 5]"),
    (Z((2, 3, 4, 6), f32), Z((2, 4, 6, 4), f32),
     "best_rbboxes must have shape [N, H, W, 5] = [2, 4, 6, 5] (N, H and W of features [2, 3, 4, 6]), got shape [2, 4, 6, 4]"),
    (Z((2, 3, 4, 6), f32), Z((2, 24, 5), f32),
     "best_rbboxes must have shape [N, H, W, 5] = [2, 4, 6, 5] (N, H and W of features [2, 3, 4, 6]), got shape [2, 24, 5]"),
])
def test_bad_inputs(identity, features, boxes, message):
    error = run_error(align_model(0.5, 5, identity), {"features": features, "best_rbboxes": boxes})
    assert f"{identity}: {message}" in error


def test_eager_errors():
    features, boxes = torch.zeros(1, 2, 3, 4), torch.zeros(1, 3, 4, 5)
    with pytest.raises(ValueError, match=r"rotated_feature_align: features must be \[N, C, H, W\] and best_rbboxes "
                                         r"\[N, H, W, 5\], got \[2, 3, 4\] and \[1, 3, 4, 5\]"):
        opbridge.ops.rotated_feature_align(torch.zeros(2, 3, 4), boxes)
    with pytest.raises(ValueError, match=r"got \[1, 2, 3, 4\] and \[1, 4, 3, 5\]"):
        opbridge.ops.rotated_feature_align(features, torch.zeros(1, 4, 3, 5))
    with pytest.raises(ValueError, match=r"rotated_feature_align: features and best_rbboxes must be float32, got "
                                         r"torch.float64 and torch.float32"):
        opbridge.ops.rotated_feature_align(features.double(), boxes)
    with pytest.raises(ValueError, match="got torch.float32 and torch.float16"):
        opbridge.ops.rotated_feature_align(features, boxes.half())
    for scale in (0.0, -1.0, NAN, INF):
        with pytest.raises(ValueError, match=f"rotated_feature_align: spatial_scale must be a finite number > 0, "
                                             f"got {scale}"):
            opbridge.ops.rotated_feature_align(features, boxes, scale)
    for points in (0, 2, 3, 4, 6):
        rule = "points must be 1 (the box centre) or 5 (the centre and the 4 corners)"
        with pytest.raises(ValueError, match=re.escape(f"rotated_feature_align: {rule}, got {points}")):
            opbridge.ops.rotated_feature_align(features, boxes, 0.125, points)


# --- the eager PyTorch op -----------------------------------------------------------------------------


@pytest.mark.parametrize("points", [1, 5])
@pytest.mark.parametrize("spatial_scale", [1 / 8, 1 / 4])
def test_eager_matches_reference_and_the_library(points, spatial_scale):
    """Against the float64 reference; against the library bit for bit (the same float32
    operations in the same order, cos and sin rounded from float64 in both)."""
    rng = np.random.default_rng(71 + points)
    features, boxes = problem(rng, 2, 3, 13, 11, spatial_scale)
    actual = eager(features, boxes, spatial_scale, points)
    assert actual.dtype == np.float32 and actual.shape == features.shape
    assert_close(actual, reference(features, boxes, spatial_scale, points), "float64_reference",
                 "rotated_feature_align")
    np.testing.assert_array_equal(actual, run_align(features, boxes, spatial_scale, points))


def test_eager_defaults_are_mmcvs():
    """mmcv's rotated_feature_align(features, best_rbboxes, spatial_scale=1/8, points=1)."""
    rng = np.random.default_rng(81)
    features, boxes = problem(rng, 1, 2, 6, 5, 1 / 8)
    actual = opbridge.ops.rotated_feature_align(torch.from_numpy(features), torch.from_numpy(boxes)).numpy()
    np.testing.assert_array_equal(actual, eager(features, boxes, 1 / 8, 1))
    assert not np.array_equal(actual, eager(features, boxes, 1 / 4, 1))
    assert not np.array_equal(actual, eager(features, boxes, 1 / 8, 5))


# --- export round trips ---------------------------------------------------------------------------------


class Refine(torch.nn.Module):
    """R3Det's use: features refined at boxes predicted from them (here by a convolution): centres
    in [-8, 72] px, sizes up to 48 px, angles in (-4, 4), so that the ORT and PyTorch convolutions'
    different rounding moves the points by far less than a pixel."""

    def __init__(self, points):
        super().__init__()
        self.points = points
        self.boxes = torch.nn.Conv2d(3, 5, 3, padding=1)

    def forward(self, features):
        raw = self.boxes(features)
        centre = torch.sigmoid(raw[:, :2]) * 80 - 8
        size = torch.sigmoid(raw[:, 2:4]) * 48
        angle = torch.tanh(raw[:, 4:]) * 4
        boxes = torch.cat([centre, size, angle], 1).permute(0, 2, 3, 1).contiguous()
        return opbridge.ops.rotated_feature_align(features, boxes, 0.25, self.points)


def check_node(proto, identity, points):
    (node,) = [n for n in proto.graph.node if f"{n.domain}::{n.op_type}" == identity]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"spatial_scale": 0.25, "points": points} and len(node.input) == 2


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat,identity", [(None, "opbridge::RotatedFeatureAlign"),
                                             ("mmcv", "mmcv::MMCVRotatedFeatureAlign")])
@pytest.mark.parametrize("points", [1, 5])
def test_export_round_trip(exporter, compat, identity, points):
    torch.manual_seed(points)
    model = Refine(points).eval()
    x = torch.randn(2, 3, 10, 12)
    proto = opbridge.export(model, (x,), exporter=exporter, compat=compat,
                            dynamic_axes={"features": {0: "n", 2: "h", 3: "w"}})
    assert custom_nodes(proto) == [identity]
    assert {o.domain for o in proto.opset_import} >= {identity.split("::")[0]}
    if compat:
        assert "opbridge" not in {o.domain for o in proto.opset_import}
    check_node(proto, identity, points)
    session = opbridge.create_session(proto)
    for shape in [(2, 3, 10, 12), (1, 3, 7, 16)]:
        features = torch.randn(*shape)
        with torch.no_grad():
            expected = model(features).numpy()
        (actual,) = session.run(None, {"features": features.numpy()})
        assert_close(actual, expected, "model")


# --- mmcv's test data (tests/test_ops/test_rotated_feature_align.py in open-mmlab/mmcv) -------------

MMCV_FEATURES = [
    1.2924, -0.2172, -0.5222, 0.1172, 0.9144, 1.2248, 1.3115, -0.9690,
    -0.8949, -1.1797, -0.9093, -0.3961, -0.4586, 0.5062, -0.7947, -0.7397,
    -1.0943, -0.7495, 1.3461, -1.1652, 0.2034, 0.6763, -1.2357, 0.5231,
    -1.0062, 1.2592, 1.4225, -0.3951, -0.1242, -1.6240, 0.1932, 2.7181,
    -1.6271, -1.0276, 0.0578, -0.2997, -0.9684, -1.6946, -1.3188, -1.1938,
    -1.6744, -0.8917, -0.6556, 1.0073, -0.1205, 0.3671, -0.3731, -0.5347,
    0.7035, 0.2089, -0.1774, 3.4670, -0.8505, -0.9278, 1.4714, 0.1644,
    0.0898, 0.3531, -0.4007, 0.1927, 1.2569, -0.2636, -0.5223, 0.0616,
    0.1760, -0.7639, -0.4600, -1.3260, -0.9921, -0.2970, -0.8955, 1.0508,
    1.3515, -0.1641, 1.9679, 1.1986, -0.3616, 0.6287, 0.4933, 0.3360,
    -0.5860, 0.2124, -0.8700, 2.4200, -0.0551, -1.5103, -1.6779, 0.8399,
    0.8431, 1.2414, -1.1243, -0.3887, -2.1254, 0.6047, -0.3515, 0.7254,
]
MMCV_BOXES = [
    1.3080e+01, 1.2688e+01, 1.1214e+01, 9.3944e+01, -9.1905e-01,
    3.8104e+01, 1.0134e+01, 1.4659e+02, 9.0306e+01, -9.8211e-01,
    -5.3213e+01, 4.9508e+01, 5.1513e+01, 3.2055e+01, -3.1954e-01,
    2.6974e+01, 2.5248e+01, 5.4495e+01, 3.1083e+00, -6.2127e-01,
    -1.5604e+01, -5.1908e+01, 2.3998e+02, 1.5008e+01, -1.2546e+00,
    3.1354e+01, -7.3635e+00, 6.7879e+01, 3.5081e+01, -3.3851e-01,
    -5.3292e+00, 9.1946e+00, 1.2834e+01, 1.0485e+01, -1.3039e+00,
    -2.3925e+01, 3.6623e+01, 3.9875e+01, 7.2009e+01, -6.5934e-01,
    7.2114e+01, -2.3781e+01, 2.9106e+01, 8.4501e+01, -1.1340e+00,
    2.6258e+01, -7.7034e+00, 1.7629e+02, 1.0615e+02, -1.2156e+00,
    3.8057e+01, 4.6016e+01, 1.2965e+01, 6.9384e+00, -1.0855e+00,
    2.4428e+01, -1.6189e+01, 2.0572e+02, 3.1622e+01, -1.5719e-01,
    3.8226e+00, 2.9608e+01, 1.4457e+01, 6.8179e+01, -9.1997e-01,
    2.5003e+01, -4.2490e+01, 9.6007e+01, 4.9086e+01, -1.4786e+00,
    8.5983e+01, 5.4980e+01, 7.8080e+01, 1.0003e+02, -1.0926e+00,
    9.9065e+00, 4.1457e+01, 5.9799e+00, 1.7973e+01, -5.6313e-01,
    -1.8244e+01, 4.6309e+00, 5.3010e+01, 2.4310e+01, -7.0345e-01,
    1.9419e+01, 3.6704e+01, 5.2390e+01, 5.4133e+01, -3.7730e-01,
    5.6387e+01, 2.3752e+01, 9.0441e+00, 1.7792e+01, -1.5583e+00,
    3.6303e+01, 1.6396e+01, 2.0283e+01, 1.9148e+01, -8.3419e-01,
    3.2169e+01, 3.0521e+01, 2.6283e+01, 1.9680e+02, -3.0454e-01,
    2.5788e+01, -3.2189e+01, 8.8882e+01, 1.0207e+02, -1.5328e+00,
    8.4676e+00, -1.6668e+01, 2.4657e+01, 1.1275e+02, -4.0388e-01,
    -1.0799e+01, 6.0422e+00, 9.5807e+00, 3.3677e+01, -3.5438e-01,
    6.9363e+01, 1.0850e+01, 2.5968e+01, 2.2311e+01, -1.6408e-01,
    2.8140e+00, 4.6843e+00, 3.1289e+00, 2.1480e+01, -6.7583e-01,
    2.6661e+01, 4.5290e+01, 6.1679e+00, 3.0005e+01, -8.9806e-01,
    5.0871e+00, 1.3234e+01, 9.2087e+01, 4.9622e+01, -2.8020e-01,
    -1.2643e+01, 2.5176e+01, 5.0488e+01, 5.4246e+01, -4.4840e-01,
    -3.4521e+01, 9.8435e-01, 5.2413e+01, 9.7996e+00, -8.4218e-01,
    4.9829e+01, -1.0808e+01, 2.9848e+01, 7.3579e+01, -6.2672e-01,
    8.0446e+01, 2.8064e+01, 4.5273e+01, 5.3809e+01, -1.2359e+00,
]
MMCV_EXPECTED = [  # points = 1, spatial_scale = 1/8
    1.1095, -0.2172, -0.5222, -0.6225, 0.9144, 0.7662, 1.0487, -0.9690,
    -0.8949, -1.6384, -0.9093, -0.3961, -0.8604, 0.5062, -0.7947, -0.7397,
    -0.3961, -0.7495, 1.3461, 1.5528, 0.2034, 0.5522, -1.6722, 0.5231,
    -1.0062, 1.1350, 1.4225, -0.3951, -0.4826, -1.6240, 0.1932, 2.7181,
    -2.6436, -1.0276, 0.0578, -0.8344, -0.9684, -1.8151, -2.1843, -1.1938,
    -1.6744, -1.0121, -0.6556, 1.0073, -0.8474, 0.3671, -0.3731, -0.5347,
    0.7035, 0.2089, -0.1774, 3.4670, -0.8505, -0.9278, 1.4714, 0.1644,
    0.0898, 0.3064, -0.4007, 0.5849, 1.2569, -0.2636, -0.5223, 0.0616,
    0.1760, -0.7639, -0.4600, -1.3260, -0.9921, -0.2970, -0.8955, 1.0508,
    1.3515, -0.6125, 1.9679, 0.5550, -0.3616, 0.6287, 0.4933, 0.3360,
    -0.5860, 0.2124, -0.8700, 2.4200, -0.0551, -1.5103, -1.6779, 0.8399,
    0.8431, 0.8455, -1.1243, -1.5994, -2.1254, 0.6047, -0.3515, 0.7254,
]
