"""RoIAlignRotated (opbridge::RoiAlignRotated, mmcv:: and mmdeploy::MMCVRoIAlignRotated) through the
built library in ORT, against a float64 reference written from the spec (rotated_reference.py),
and opbridge.ops.roi_align_rotated's eager implementation against both."""

from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest
import torch

import opbridge.ops
from graphs import assert_close, one_node_model, run, run_error, session_error
from opbridge import manifest
from rotated_reference import roi_align_rotated_reference

IDENTITIES = manifest.load()["roi_align_rotated"].identities
# Angles the sweep always includes: axis-aligned, quarter turns either way, past a full turn.
SPECIAL_ANGLES = [0.0, math.pi / 2, -math.pi / 2, math.pi, 2 * math.pi + 0.3, -7.0]


def rotated_model(identity="opbridge::RoiAlignRotated", **attrs):
    full = dict(output_height=7, output_width=7, spatial_scale=1.0, sampling_ratio=0, aligned=1, clockwise=0)
    full.update(attrs)
    full = {k: v for k, v in full.items() if v is not None}
    return one_node_model(identity, full, ["input", "rois"], ["output"])


def make_rotated_rois(rng, count, batch, height, width, scale, negative=False):
    """Rotated boxes in image coordinates: centres mostly inside, some partly or wholly outside,
    some tiny or zero-size, angles random plus SPECIAL_ANGLES; with negative=True some sides < 0."""
    img_h, img_w = height / scale, width / scale
    cx = rng.uniform(-0.3 * img_w, 1.3 * img_w, count)
    cy = rng.uniform(-0.3 * img_h, 1.3 * img_h, count)
    low = -0.2 if negative else 0.0
    w = rng.uniform(low * img_w, 0.9 * img_w, count)
    h = rng.uniform(low * img_h, 0.9 * img_h, count)
    tiny = rng.random(count) < 0.15
    w[tiny] *= 0.01
    h[tiny] *= 0.01
    w[:2] = 0.0  # zero-size boxes
    theta = rng.uniform(-2 * math.pi, 2 * math.pi, count)
    theta[2:2 + len(SPECIAL_ANGLES)] = SPECIAL_ANGLES[:max(0, count - 2)]
    b = rng.integers(0, batch, count)
    return np.stack([b, cx, cy, w, h, theta], axis=1).astype(np.float32)


def pool(identity, x, rois, out, **attrs):
    model = rotated_model(identity, output_height=out[0], output_width=out[1], **attrs)
    return run(model, {"input": x, "rois": rois})[0]


SWEEP = list(itertools.product(
    [(1, 1, 1, 1), (1, 3, 7, 5), (2, 4, 33, 47)],  # N, C, H, W
    [(1, 1), (7, 7), (3, 5)],  # output size
    [-1, 0, 1, 2],  # sampling ratio
    [0, 1],  # aligned
    [0, 1],  # clockwise
    [1.0, 0.25],  # spatial scale
))


@pytest.mark.parametrize("shape,out,sampling,aligned,clockwise,scale", SWEEP)
def test_matches_float64_reference(shape, out, sampling, aligned, clockwise, scale):
    n, c, h, w = shape
    rng = np.random.default_rng(zlib.crc32(repr((shape, out, sampling, aligned, clockwise, scale)).encode()))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    rois = make_rotated_rois(rng, 23, n, h, w, scale, negative=bool(aligned))
    attrs = dict(spatial_scale=scale, sampling_ratio=sampling, aligned=aligned, clockwise=clockwise)
    actual = pool("opbridge::RoiAlignRotated", x, rois, out, **attrs)
    expected = roi_align_rotated_reference(x, rois, out, scale, sampling, aligned, clockwise)
    assert_close(actual, expected, "float64_reference", "roi_align_rotated")


@pytest.mark.parametrize("sampling,aligned,clockwise", list(itertools.product([0, 2], [0, 1], [0, 1])))
def test_eager_op_matches_kernel_and_reference(sampling, aligned, clockwise):
    """opbridge.ops.roi_align_rotated (the PyTorch side) computes what the kernel computes, in
    float32, and what the reference computes, in float64."""
    rng = np.random.default_rng(7 + sampling + 2 * aligned + 4 * clockwise)
    x = rng.standard_normal((2, 5, 30, 41)).astype(np.float32)
    rois = make_rotated_rois(rng, 40, 2, 30, 41, 0.5, negative=bool(aligned))
    rois[5] = [1, 40, 30, np.nan, 10, 0.1]  # a non-finite box: NaN row everywhere
    args = ((3, 4), 0.5, sampling, bool(aligned), bool(clockwise))
    eager = opbridge.ops.roi_align_rotated(torch.from_numpy(x), torch.from_numpy(rois), *args).numpy()
    kernel = pool("opbridge::RoiAlignRotated", x, rois, (3, 4), spatial_scale=0.5, sampling_ratio=sampling,
                  aligned=aligned, clockwise=clockwise)
    assert_close(eager, kernel, "same_precision", "roi_align_rotated")
    eager64 = opbridge.ops.roi_align_rotated(torch.from_numpy(x).double(), torch.from_numpy(rois).double(), *args)
    expected = roi_align_rotated_reference(x, rois, (3, 4), 0.5, sampling, aligned, clockwise)
    np.testing.assert_allclose(eager64.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_clockwise_is_the_negated_angle():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 20, 20)).astype(np.float32)
    rois = make_rotated_rois(rng, 30, 1, 20, 20, 1.0)
    mirrored = rois.copy()
    mirrored[:, 5] *= -1
    np.testing.assert_array_equal(pool("opbridge::RoiAlignRotated", x, rois, (4, 4), clockwise=1),
                                  pool("opbridge::RoiAlignRotated", x, mirrored, (4, 4), clockwise=0))


def test_angle_zero_is_axis_aligned_roi_align():
    """At theta = 0 a rotated box is the axis-aligned box around the same centre: the pooled
    features equal torchvision's roi_align of (cx - w/2, cy - h/2, cx + w/2, cy + h/2)."""
    import torchvision

    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 24, 32)).astype(np.float32)
    boxes = np.array([[0, 4, 4, 20, 12], [0, 1, 2, 31, 23], [0, 10, 10, 11, 14]], np.float32)
    cx, cy = (boxes[:, 1] + boxes[:, 3]) / 2, (boxes[:, 2] + boxes[:, 4]) / 2
    w, h = boxes[:, 3] - boxes[:, 1], boxes[:, 4] - boxes[:, 2]
    rois = np.stack([boxes[:, 0], cx, cy, w, h, np.zeros(3)], 1).astype(np.float32)
    for aligned in (0, 1):
        actual = pool("opbridge::RoiAlignRotated", x, rois, (3, 4), sampling_ratio=2, aligned=aligned)
        expected = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(boxes), (3, 4), 1.0, 2,
                                             bool(aligned)).numpy()
        assert_close(actual, expected, "same_precision", "roi_align_rotated")


@pytest.mark.parametrize("identity", IDENTITIES[1:])
def test_peer_graphs_as_exported(identity):
    """The node exactly as mmcv 1.x and mmdeploy write it: all six attributes, opset 11, IR 6. mmcv's
    exporter writes output_width = output_height, and the node pools what its attributes say."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    rois = np.array([[0, 8, 8, 10, 6, 0.5], [1, 4, 12, 6, 9, -2.0]], np.float32)
    out_w = 2 if identity.startswith("mmcv") else 3  # mmcv writes output_width = output_height
    model = rotated_model(identity, output_height=2, output_width=out_w, spatial_scale=0.5, sampling_ratio=2,
                          aligned=1, clockwise=0)
    model.opset_import[0].version = 11
    model.ir_version = 6
    (actual,) = run(model, {"input": x, "rois": rois})
    assert actual.shape == (2, 3, 2, out_w)
    expected = roi_align_rotated_reference(x, rois, (2, out_w), 0.5, 2, True, False)
    assert_close(actual, expected, "float64_reference", "roi_align_rotated")


def test_roi_larger_than_the_preparation_budget_matches_the_reference():
    """A RoI with more sample points than a preparation group holds (2^16) is pooled computing its
    points on the fly: same arithmetic, same numbers as when they are prepared."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 30, 30)).astype(np.float32)
    rois = np.array([[0, 15, 15, 20, 12, 0.7], [0, 10, 12, 8, 8, -0.2]], np.float32)
    big = pool("opbridge::RoiAlignRotated", x, rois, (7, 7), sampling_ratio=40)  # 49 * 1600 points per roi
    assert_close(big, roi_align_rotated_reference(x, rois, (7, 7), 1.0, 40), "float64_reference", "roi_align_rotated")
    small = pool("opbridge::RoiAlignRotated", x, rois, (7, 7), sampling_ratio=36)  # 63504 points: prepared
    assert_close(small, roi_align_rotated_reference(x, rois, (7, 7), 1.0, 36), "float64_reference", "roi_align_rotated")


def test_size_one_input():
    x = np.ones((1, 3, 1, 1), np.float32)
    out = pool("opbridge::RoiAlignRotated", x, np.array([[0, 0.5, 0.5, 1, 1, 0.3]], np.float32), (1, 1))
    np.testing.assert_allclose(out, 1.0)


@pytest.mark.parametrize("shape", [(1, 1, 0, 5), (1, 1, 3, 0), (1, 1, 0, 0), (1, 1, 0, 2**40)])
def test_empty_feature_map_axis_reads_zero(shape):
    rois = np.array([[0, 1, 1, 3, 3, 0.5], [0, -2, -2, 1, 1, 0], [0, 0.5, 0.5, 0, 0, 1]], np.float32)
    for aligned in (0, 1):
        out = pool("opbridge::RoiAlignRotated", np.zeros(shape, np.float32), rois, (2, 3), aligned=aligned,
                   sampling_ratio=2)
        assert out.shape == (3, 1, 2, 3)
        np.testing.assert_array_equal(out, 0.0)


def test_rois_wholly_outside_pool_to_zero():
    x = np.full((1, 2, 8, 8), 5.0, np.float32)
    rois = np.array([[0, -50, -50, 10, 10, 0.3], [0, 100, 4, 6, 6, -1.0]], np.float32)
    np.testing.assert_array_equal(pool("opbridge::RoiAlignRotated", x, rois, (3, 3)), 0.0)


def test_nan_in_features_propagates():
    x = np.ones((1, 2, 10, 10), np.float32)
    x[0, 0, 4, 4] = np.nan
    rois = np.array([[0, 4.5, 4.5, 4, 4, 0.4], [0, 1, 8, 1, 1, 0]], np.float32)
    out = pool("opbridge::RoiAlignRotated", x, rois, (2, 2))
    assert np.isnan(out[0, 0]).any() and not np.isnan(out[0, 1]).any() and not np.isnan(out[1]).any()


def test_non_finite_roi_gives_nan_rows():
    x = np.ones((1, 2, 6, 6), np.float32)
    rois = np.array([[0, np.nan, 0, 3, 3, 0], [0, 0, 0, np.inf, 3, 0], [0, 2, 2, 2, 2, np.inf],
                     [0, 2, 2, 2, 2, 0.5]], np.float32)
    out = pool("opbridge::RoiAlignRotated", x, rois, (2, 2))
    assert np.isnan(out[:3]).all()
    np.testing.assert_allclose(out[3], 1.0, rtol=1e-6)


def test_negative_aligned_sides_with_adaptive_sampling_pool_to_zero():
    """mmcv's PyTorch op asserts non-negative sides when aligned; the kernel follows the formulas:
    the adaptive grid ceil(side / out) is <= 0, so there are no samples and the bins are 0."""
    x = np.ones((1, 1, 8, 8), np.float32)
    rois = np.array([[0, 4, 4, -3, 2, 0.2], [0, 4, 4, 3, -1e30, 0]], np.float32)
    np.testing.assert_array_equal(pool("opbridge::RoiAlignRotated", x, rois, (2, 2), aligned=1), 0.0)


@pytest.mark.parametrize("attrs,message", [
    (dict(output_height=0), "output_height and output_width must be >= 1, got 0 and 7"),
    (dict(output_width=-2), "output_height and output_width must be >= 1, got 7 and -2"),
    (dict(spatial_scale=0.0), "spatial_scale must be a finite number > 0, got 0"),
    (dict(spatial_scale=float("nan")), "spatial_scale must be a finite number > 0, got nan"),
    (dict(output_height=2**20 + 1, output_width=1), "output_height and output_width must be <= 2^20 each and their "
     "product <= 2^31 (every bin takes at least one sample per axis), got 1048577 and 1"),
])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_attributes_fail_at_session_creation(identity, attrs, message):
    assert f"{identity}: {message}" in session_error(rotated_model(identity, **attrs))


@pytest.mark.parametrize("x_shape,rois,message", [
    ((1, 2, 4), [[0, 0, 0, 1, 1, 0]], "input must have rank 4 [N, C, H, W], got shape [1, 2, 4]"),
    ((1, 2, 4, 4), [[0, 0, 0, 1, 1]], "rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, "
     "theta), got shape [1, 5]"),
    ((2, 2, 4, 4), [[2, 0, 0, 1, 1, 0]], "rois[0, 0] is the batch index and must lie in [0, 2) after truncation "
     "toward zero, got 2"),
    ((2, 2, 4, 4), [[0, 0, 0, 1, 1, 0], [-1, 0, 0, 1, 1, 0]], "rois[1, 0] is the batch index and must lie in [0, 2) "
     "after truncation toward zero, got -1"),
    ((1, 2, 4, 4), [[np.nan, 0, 0, 1, 1, 0]], "rois[0, 0] is the batch index and must lie in [0, 1) after "
     "truncation toward zero, got nan"),
    # No image: -0.5 truncates to 0, which is not an image either (the fuzzer's segfault).
    ((0, 1, 4294967297, 1), [[-0.5, 0, 0, 1, 1, 0]], "rois[0, 0] is the batch index and must lie in [0, 0) after "
     "truncation toward zero, got -0.5"),
])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_inputs_fail_at_run_time(identity, x_shape, rois, message):
    feeds = {"input": np.zeros(x_shape, np.float32), "rois": np.array(rois, np.float32)}
    assert f"{identity}: {message}" in run_error(rotated_model(identity), feeds)


@pytest.mark.parametrize("attrs,box", [
    (dict(sampling_ratio=65536, output_height=1, output_width=1), [0, 1, 1, 1, 1, 0]),  # 2^32 samples
    (dict(sampling_ratio=0, output_height=1, output_width=1), [0, 0, 0, 1e6, 1e6, 0.5]),  # adaptive 1e6 x 1e6
])
def test_sample_budget_per_roi_is_an_error(attrs, box):
    feeds = {"input": np.ones((1, 1, 2, 2), np.float32), "rois": np.array([box], np.float32)}
    message = run_error(rotated_model(**attrs), feeds)
    assert "opbridge::RoiAlignRotated: roi 0 needs a " in message
    assert ("more than 2^20 sample rows or columns or 2^31 samples per roi (output 1x1); pass a smaller positive "
            "sampling_ratio") in message


def test_huge_batch_with_few_images_read_runs():
    """The blocked path keeps per-image data for the images the RoIs read only, not for the whole
    batch (2^31 images ran out of memory on per-image arrays)."""
    rois = np.array([[0, 1, 1, 2, 2, 0.3]] * 300, np.float32)  # enough points for the blocked path
    out = pool("opbridge::RoiAlignRotated", np.ones((2**31, 5, 0, 6), np.float32), rois, (8, 1), sampling_ratio=2)
    assert out.shape == (300, 5, 8, 1)
    np.testing.assert_array_equal(out, 0.0)



@pytest.mark.parametrize("identity", IDENTITIES)
def test_work_per_call_is_limited(identity):
    """One RoI within its budget (46,000 x 46,000 samples of one bin) over 64 channels: 1.4e11
    samples x channels, past the limit of 2^36 per call (core/work_limits.h), refused before any
    pooling (on the GPU: NaN throughout)."""
    model = rotated_model(identity, output_height=1, output_width=1, sampling_ratio=0, aligned=0)
    feeds = {"input": np.ones((1, 64, 1, 1), np.float32),
             "rois": np.array([[0, 0, 0, 46000, 46000, 0.5]], np.float32)}
    assert (f"{identity}: the rois need at least 2116000000 samples for each of 64 channels, more than the limit "
            "of 2^36 (68719476736) samples x channels per call") in run_error(model, feeds)
