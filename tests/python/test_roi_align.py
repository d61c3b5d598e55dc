"""RoIAlign through the built library in ORT, against torchvision.ops.roi_align (float32 and
float64) and, for "max" mode, a scalar float64 reference written from the spec."""

from __future__ import annotations

import itertools
import zlib
import math

import numpy as np
import pytest
import torch
import torchvision

import graphs
from graphs import assert_close, cast_around, one_node_model, round_to, run, run_error, session_error
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan, tolerance

IDENTITIES = manifest.load()["roi_align"].identities


def roi_model(identity="opbridge::RoiAlign", dtype="float32", **attrs):
    """The node with inputs and output in `dtype` (bfloat16 behind casts from and to float32)."""
    full = dict(output_height=7, output_width=7, spatial_scale=1.0, sampling_ratio=0, mode="avg", aligned=1)
    full.update(attrs)
    full = {k: v for k, v in full.items() if v is not None}
    model = one_node_model(identity, full, ["input", "rois"], ["output"], input_types={"input": dtype, "rois": dtype})
    return cast_around(model, dtype, {"input", "rois"}, {"output"}) if dtype == "bfloat16" else model


def make_rois(rng, count, batch, height, width, scale, inverted=True):
    """Boxes in image coordinates: mostly inside, some partly or wholly outside, some tiny,
    and with inverted=True some inverted (x2 < x1 or y2 < y1)."""
    img_h, img_w = height / scale, width / scale
    x1 = rng.uniform(-0.3 * img_w, 1.1 * img_w, count)
    y1 = rng.uniform(-0.3 * img_h, 1.1 * img_h, count)
    low = -0.1 if inverted else 0.0
    w = rng.uniform(low * img_w, 0.8 * img_w, count)
    h = rng.uniform(low * img_h, 0.8 * img_h, count)
    tiny = rng.random(count) < 0.15
    w[tiny] *= 0.01
    h[tiny] *= 0.01
    b = rng.integers(0, batch, count)
    return np.stack([b, x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


SWEEP = list(itertools.product(
    [(1, 1, 1, 1), (1, 3, 7, 5), (2, 4, 33, 47)],  # N, C, H, W
    [(1, 1), (7, 7), (3, 5)],  # output size
    [-1, 0, 1, 2, 3],  # sampling ratio
    [0, 1],  # aligned
    [1.0, 0.25],  # spatial scale
))


@pytest.mark.parametrize("shape,out,sampling,aligned,scale", SWEEP)
def test_avg_matches_torchvision(shape, out, sampling, aligned, scale):
    n, c, h, w = shape
    rng = np.random.default_rng(zlib.crc32(repr((shape, out, sampling, aligned, scale)).encode()))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    # torchvision fails on inverted boxes when aligned with adaptive sampling (it sizes a
    # buffer from a negative grid); test_inverted_aligned_adaptive_boxes_pool_to_zero covers them.
    rois = make_rois(rng, 23, n, h, w, scale, inverted=not (aligned and sampling <= 0))
    (actual,) = run(roi_model(output_height=out[0], output_width=out[1], spatial_scale=scale,
                              sampling_ratio=sampling, aligned=aligned), {"input": x, "rois": rois})
    args = (out, scale, sampling, bool(aligned))
    same = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(rois), *args).numpy()
    exact = torchvision.ops.roi_align(torch.from_numpy(x).double(), torch.from_numpy(rois).double(), *args).numpy()
    assert actual.shape == (23, c, out[0], out[1])
    assert_close(actual, same, "same_precision", "roi_align")
    assert_close(actual, exact, "float64_reference", "roi_align")


def test_inverted_aligned_adaptive_boxes_pool_to_zero():
    """An aligned box with x2 < x1 (or y2 < y1) gets an adaptive grid <= 0: no samples, output 0.
    (torchvision raises "cannot create std::vector larger than max_size()" here.)"""
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    rois = np.array([[0, 6, 1, 2, 5], [0, 1, 6, 5, 2], [0, 1, 1, 5, 5]], np.float32)
    (actual,) = run(roi_model(output_height=2, output_width=2, sampling_ratio=0), {"input": x, "rois": rois})
    np.testing.assert_array_equal(actual[:2], 0.0)
    expected = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(rois[2:]), 2, 1.0, 0, True).numpy()
    assert_close(actual[2:], expected, "same_precision", "roi_align")


def max_reference(x, rois, out_h, out_w, scale, sampling, aligned):
    """mmcv's "max" RoIAlign, one sample at a time in float64, from compat_ops.md section 5.1:
    the maximum of the bilinear samples of a bin (samples outside read 0); an empty grid gives 0."""
    n, c, h, w = x.shape
    result = np.zeros((len(rois), c, out_h, out_w))
    off = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sw, sh, ew, eh = x1 * scale - off, y1 * scale - off, x2 * scale - off, y2 * scale - off
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling if sampling > 0 else math.ceil(rh / out_h)
        gw = sampling if sampling > 0 else math.ceil(rw / out_w)
        for ph, pw in itertools.product(range(out_h), range(out_w)):
            samples = []
            for iy, ix in itertools.product(range(max(gh, 0)), range(max(gw, 0))):
                yy = sh + ph * rh / out_h + (iy + 0.5) * rh / out_h / gh
                xx = sw + pw * rw / out_w + (ix + 0.5) * rw / out_w / gw
                samples.append(bilinear(x[int(b)], yy, xx))
            if samples:
                result[r, :, ph, pw] = np.max(samples, axis=0)
    return result


def bilinear(plane, y, x):
    c, h, w = plane.shape
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(c)
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * plane[:, y0, x0] + (1 - ly) * lx * plane[:, y0, x1]
            + ly * (1 - lx) * plane[:, y1, x0] + ly * lx * plane[:, y1, x1])


@pytest.mark.parametrize("sampling,aligned,scale", [(0, 1, 0.5), (2, 0, 1.0), (1, 1, 0.25), (3, 0, 0.5)])
def test_max_matches_reference(sampling, aligned, scale):
    rng = np.random.default_rng(11 + sampling)
    x = rng.standard_normal((2, 3, 12, 15)).astype(np.float32)
    rois = make_rois(rng, 9, 2, 12, 15, scale)
    (actual,) = run(roi_model(output_height=3, output_width=4, spatial_scale=scale, sampling_ratio=sampling,
                              aligned=aligned, mode="max"), {"input": x, "rois": rois})
    expected = max_reference(x, rois, 3, 4, scale, sampling, aligned)
    assert_close(actual, expected, "float64_reference", "roi_align")


def test_mmcv_graph_as_exported():
    """The node exactly as mmcv 1.x writes it: mmcv domain, all six attributes, opset 11, IR 6."""
    model = roi_model("mmcv::MMCVRoiAlign", output_height=2, output_width=2, spatial_scale=0.5,
                      sampling_ratio=2, mode="avg", aligned=1)
    model.opset_import[0].version = 11
    model.ir_version = 6
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
    rois = np.array([[0, 1, 1, 9, 9], [0, 4, 2, 14, 12]], np.float32)
    (actual,) = run(model, {"input": x, "rois": rois})
    expected = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(rois), 2, 0.5, 2, True).numpy()
    assert_close(actual, expected, "same_precision", "roi_align")


def test_size_one_input():
    x = np.ones((1, 3, 1, 1), np.float32)
    (out,) = run(roi_model(output_height=1, output_width=1), {"input": x, "rois": np.array([[0, 0, 0, 1, 1]], np.float32)})
    np.testing.assert_allclose(out, 1.0)


def test_nan_in_features_propagates_like_torchvision():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 10, 10)).astype(np.float32)
    x[0, 0, 3, 4] = np.nan
    rois = np.array([[0, 0, 0, 9, 9], [0, 6, 6, 9, 9]], np.float32)
    (actual,) = run(roi_model(output_height=2, output_width=2), {"input": x, "rois": rois})
    expected = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(rois), 2, 1.0, 0, True).numpy()
    assert np.isnan(actual).any()
    assert_close(actual, expected, "same_precision", "roi_align")


def test_non_finite_roi_gives_nan_rows():
    x = np.ones((1, 2, 6, 6), np.float32)
    rois = np.array([[0, np.nan, 0, 3, 3], [0, 0, 0, np.inf, 3], [0, 1, 1, 4, 4]], np.float32)
    (actual,) = run(roi_model(output_height=2, output_width=2), {"input": x, "rois": rois})
    assert np.isnan(actual[:2]).all()
    np.testing.assert_allclose(actual[2], 1.0)


@pytest.mark.parametrize("attrs,message", [
    (dict(output_height=0), "output_height and output_width must be >= 1, got 0 and 7"),
    (dict(output_width=-2), "output_height and output_width must be >= 1, got 7 and -2"),
    (dict(spatial_scale=0.0), "spatial_scale must be a finite number > 0, got 0"),
])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_attributes_fail_at_session_creation(identity, attrs, message):
    error = session_error(roi_model(identity, **attrs))
    assert f"{identity}: {message}" in error


@pytest.mark.parametrize("x_shape,rois,message", [
    ((1, 2, 4), [[0, 0, 0, 1, 1]], "input must have rank 4 [N, C, H, W], got shape [1, 2, 4]"),
    ((1, 2, 4, 4), [[0, 0, 0, 1]], "rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape [1, 4]"),
    ((2, 2, 4, 4), [[2, 0, 0, 1, 1]], "rois[0, 0] is the batch index and must lie in [0, 2) after truncation toward zero, got 2"),
    ((2, 2, 4, 4), [[0, 0, 0, 1, 1], [-1, 0, 0, 1, 1]], "rois[1, 0] is the batch index and must lie in [0, 2) after truncation toward zero, got -1"),
    ((1, 2, 4, 4), [[np.nan, 0, 0, 1, 1]], "rois[0, 0] is the batch index and must lie in [0, 1) after truncation toward zero, got nan"),
    # No image: -0.5 truncates to 0, which is not an image either (it was read out of bounds).
    ((0, 2, 4, 4), [[-0.5, 0, 0, 1, 1]], "rois[0, 0] is the batch index and must lie in [0, 0) after truncation toward zero, got -0.5"),
])
def test_bad_inputs_fail_at_run_time(x_shape, rois, message):
    feeds = {"input": np.zeros(x_shape, np.float32), "rois": np.array(rois, np.float32)}
    assert f"opbridge::RoiAlign: {message}" in run_error(roi_model(), feeds)


# Regression tests for defects a fuzzer found (issue 11).

@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shape", [(1, 1, 0, 5), (1, 1, 3, 0), (1, 1, 0, 0), (1, 1, 0, 2**40), (1, 2, 2**40, 0)])
def test_empty_feature_map_axis_reads_zero(identity, mode, shape):
    """A feature map with no rows or no columns has nothing to sample: every RoI pools to 0. (The
    kernel read index -1 there: 3e-41 for [1, 1, 0, 5], a segfault for [1, 1, 0, 2^40].)"""
    rois = np.array([[0, 0, 0, 3, 3], [0, -2, -2, 1, 1], [0, 0.5, 0.5, 0.5, 0.5]], np.float32)
    for aligned in (0, 1):
        model = roi_model(identity, output_height=2, output_width=3, mode=mode, aligned=aligned, sampling_ratio=2)
        (out,) = run(model, {"input": np.zeros(shape, np.float32), "rois": rois})
        assert out.shape == (3, shape[1], 2, 3)
        np.testing.assert_array_equal(out, 0.0)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("attrs,box", [
    (dict(sampling_ratio=65536, output_height=1, output_width=1), [0, 0, 0, 1, 1]),  # 2^32 samples
    (dict(sampling_ratio=2**20, output_height=1, output_width=1), [0, 0, 0, 1, 1]),  # 2^40 samples
    (dict(sampling_ratio=0, output_height=1, output_width=1), [0, 0, 0, 1e6, 1e6]),  # adaptive 1e6 x 1e6 grid
    (dict(sampling_ratio=2**21, output_height=1, output_width=1), [0, 0, 0, 1, 1]),  # 2^21 rows
])
def test_sample_budget_per_roi_is_an_error(mode, attrs, box):
    """At most 2^20 sample rows and columns and 2^31 samples per RoI, in either mode: "max" mode
    used to bound the axes only, so one RoI could take 2^40 samples (hours)."""
    model = roi_model(mode=mode, **attrs)
    feeds = {"input": np.ones((1, 1, 2, 2), np.float32), "rois": np.array([box], np.float32)}
    message = run_error(model, feeds)
    assert "opbridge::RoiAlign: roi 0 needs a " in message
    assert "more than 2^20 sample rows or columns or 2^31 samples per roi (output 1x1); pass a smaller positive sampling_ratio" in message


@pytest.mark.parametrize("identity", IDENTITIES)
def test_work_per_call_is_limited(identity):
    """Each RoI within its budget (46,000 x 46,000 samples of one bin, under 2^31), but with 64
    channels the call would take 1.4e11 samples x channels, past the limit of 2^36 per call
    (core/work_limits.h): refused before any pooling (on the GPU: NaN throughout)."""
    model = roi_model(identity, sampling_ratio=0, output_height=1, output_width=1, aligned=0)
    feeds = {"input": np.ones((1, 64, 1, 1), np.float32), "rois": np.array([[0, 0, 0, 46000, 46000]], np.float32)}
    message = run_error(model, feeds)
    assert (f"{identity}: the rois need at least 2116000000 samples for each of 64 channels, more than the limit "
            "of 2^36 (68719476736) samples x channels per call; pass a smaller positive sampling_ratio or fewer "
            "rois") in message


@pytest.mark.parametrize("identity", IDENTITIES)
def test_output_per_call_is_limited(identity):
    """An output of more than 2^30 elements per call is refused before it is allocated."""
    model = roi_model(identity, output_height=1100, output_width=1000, sampling_ratio=1)
    feeds = {"input": np.ones((1, 1024, 1, 1), np.float32), "rois": np.array([[0, 0, 0, 1, 1]], np.float32)}
    assert (f"{identity}: the output [1, 1024, 1100, 1000] would hold more than the limit of 2^30 (1073741824) "
            "elements per call") in run_error(model, feeds)


@pytest.mark.sanitizer_heavy  # 2^30 samples on one GPU thread: seconds on the GPU
def test_largest_sample_budget_runs():
    """2^15 x 2^15 samples of one bin (2^30, within the budget) run and average the constant map
    (on the GPU too: its kernel sums each sample row separately, as the CPU kernel does; summed sample
    by sample in float32 the sum stops growing at 2^26 and the bin averages to 0.0625)."""
    model = roi_model(mode="avg", sampling_ratio=2**15, output_height=1, output_width=1)
    (out,) = run(model, {"input": np.full((1, 1, 2, 2), 3.0, np.float32), "rois": np.array([[0, 0, 0, 1, 1]], np.float32)})
    np.testing.assert_allclose(out, 3.0, rtol=1e-5)


@pytest.mark.parametrize("attrs,got", [
    (dict(output_height=1, output_width=2**32 + 1), "1 and 4294967297"),
    (dict(output_height=2**20 + 1, output_width=1), "1048577 and 1"),
    (dict(output_height=2**16, output_width=2**16), "65536 and 65536"),
])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_huge_output_size_fails_at_session_creation(identity, attrs, got):
    """Refused before any output is allocated (output_width 2^32 + 1 made ORT reserve 16 GB and
    then fail on the sample limit)."""
    message = session_error(roi_model(identity, **attrs))
    assert (f"{identity}: output_height and output_width must be <= 2^20 each and their product <= 2^31 "
            f"(every bin takes at least one sample per axis), got {got}") in message


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_far_inverted_box_has_no_samples(mode):
    """An aligned, adaptive box whose side is -1e30 has a grid of ceil(-1e30 / out) <= 0 samples
    and pools to 0 (the float was converted to int64 out of range: undefined behaviour)."""
    rois = np.array([[0, 0, 0, -1e30, -1e30], [0, 1e30, 1e30, 0, 0], [0, 0, 0, -1e30, 2]], np.float32)
    (out,) = run(roi_model(mode=mode, output_height=2, output_width=2), {"input": np.ones((1, 1, 4, 4), np.float32), "rois": rois})
    np.testing.assert_array_equal(out, 0.0)


# --- half precision: float16 and bfloat16 storage, float32 arithmetic ------------------------------------

HALF = ["float16", "bfloat16"]


def run_half(dtype, x, rois, **attrs) -> np.ndarray:
    """The op's output in `dtype` on x and rois rounded to `dtype`, as float32."""
    (out,) = graphs.run_half(roi_model(dtype=dtype, **attrs), {"input": x, "rois": rois}, dtype)
    return out


def float32_kernel_rounded(dtype, x, rois, **attrs) -> np.ndarray:
    """What the half op must give: the float32 op's output on the half values, rounded once."""
    (out,) = run(roi_model(**attrs), {"input": round_to(x, dtype), "rois": round_to(rois, dtype)})
    return round_to(out, dtype)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("sampling,aligned,mode", [(0, 1, "avg"), (2, 0, "avg"), (0, 1, "max")])
@pytest.mark.parametrize("count", [3, 300])  # RoIs: the kernel converts the rows they read, or whole planes
def test_half_is_the_float32_result_rounded_once(dtype, sampling, aligned, mode, count):
    """Against torchvision's float32 roi_align on the half values (what autocast runs), rounded: within
    the half tolerance; and within half an ulp of the op's own float32 result (one rounding)."""
    rng = np.random.default_rng(zlib.crc32(f"half/{dtype}/{sampling}/{aligned}/{mode}/{count}".encode()))
    x = rng.standard_normal((2, 16, 40, 50)).astype(np.float32)
    rois = make_rois(rng, count, 2, 40, 50, 0.5)
    attrs = dict(spatial_scale=0.5, sampling_ratio=sampling, aligned=aligned, mode=mode)
    got = run_half(dtype, x, rois, **attrs)
    (exact,) = run(roi_model(**attrs), {"input": round_to(x, dtype), "rois": round_to(rois, dtype)})
    spacing = np.spacing(round_to(np.abs(exact), dtype).astype(np.float16 if dtype == "float16" else np.float32))
    ulp = spacing.astype(np.float32) if dtype == "float16" else np.abs(exact) * 2.0**-7 + 2.0**-133
    finite = np.isfinite(exact)
    assert np.all(np.abs(got - exact)[finite] <= 0.5 * ulp[finite] + 1e-45)
    assert np.array_equal(np.isnan(got), np.isnan(exact))
    if mode == "avg":
        tv = torchvision.ops.roi_align(torch.from_numpy(round_to(x, dtype)), torch.from_numpy(round_to(rois, dtype)),
                                       (7, 7), 0.5, sampling, bool(aligned)).numpy()
        tol = tolerance("half", dtype)
        np.testing.assert_allclose(got, round_to(tv, dtype), rtol=tol.rtol, atol=tol.atol, equal_nan=True)


@pytest.mark.parametrize("dtype", HALF)
def test_half_edge_cases(dtype):
    """Values past float16's largest (65,504: infinity), subnormal maps (kept, not flushed), NaN and
    infinite boxes (NaN rows), and a box corner whose rounding moves its samples across a pixel: each
    the float32 kernel's result on the half values, rounded once."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 20, 24)).astype(np.float32)
    x[0, 0] = np.abs(x[0, 0]) * 1e5  # float16: many beyond 65,504, so infinite
    x[0, 1] *= 1e-6  # float16: subnormal (below 6.1e-5)
    rois = np.array([[0, 1.0, 1.0, 15.0, 12.0], [0, np.nan, 1.0, 5.0, 5.0], [0, 1.0, 1.0, np.inf, 5.0],
                     [0, 2.3, 4.6, 7.7, 9.4], [0, 10.1, 3.3, 10.9, 3.9]], dtype=np.float32)
    got = run_half(dtype, x, rois, output_height=3, output_width=4, sampling_ratio=2)
    want = float32_kernel_rounded(dtype, x, rois, output_height=3, output_width=4, sampling_ratio=2)
    assert same_bits_but_nan(want, got)
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all()
    if dtype == "float16":
        small = np.abs(got[[0, 3, 4], 1])
        assert ((small > 0) & (small < 6.1e-5)).any()  # subnormal outputs, not flushed to 0
        assert not np.isfinite(got[0, 0]).all()  # the infinities reached the sums
    # 1,000.3 rounds to 1,000.5 in float16 (spacing 0.5) and to 1,000 in bfloat16 (spacing 8): the
    # samples are the half box's, not the float32 box's.
    wide = rng.standard_normal((1, 1, 4, 1100)).astype(np.float32)
    box = np.array([[0, 1000.3, 0.0, 1003.3, 3.0]], dtype=np.float32)
    got = run_half(dtype, wide, box, output_height=1, output_width=3, sampling_ratio=1)
    assert same_bits_but_nan(float32_kernel_rounded(dtype, wide, box, output_height=1, output_width=3,
                                                    sampling_ratio=1), got)
    (unrounded,) = run(roi_model(output_height=1, output_width=3, sampling_ratio=1),
                       {"input": round_to(wide, dtype), "rois": box})
    assert not np.array_equal(round_to(unrounded, dtype), got)


def test_half_inputs_take_one_dtype():
    """float16 features with float32 RoIs are refused when the session is created."""
    model = one_node_model("opbridge::RoiAlign", dict(output_height=2, output_width=2), ["input", "rois"], ["output"],
                           input_types={"input": "float16", "rois": "float32"})
    assert ("opbridge::RoiAlign: input 'rois' has dtype float32 and input 'input' float16: the op takes one dtype "
            "for both (one of float32, float16 or bfloat16)") in session_error(model)
