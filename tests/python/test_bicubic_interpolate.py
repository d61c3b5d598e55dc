"""Bicubic interpolation through the built library in ORT (opbridge::BicubicInterpolate,
mmdeploy::TRTBicubicInterpolate), against F.interpolate(mode="bicubic", scale_factor=...) in
float32 (the same arithmetic) and in float64 (the reference); the node as mmdeploy's exporter
writes it; F.interpolate's output sizes where the TensorRT plugin's differ."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphs import assert_close, one_node_model, run, run_error, session_error
from opbridge import manifest

IDENTITIES = manifest.load()["bicubic_interpolate"].identities
SCALES = [(2.0, 2.0), (1.5, 1.5), (0.5, 0.5), (3.7, 3.7), (2.0, 0.5), (1.0, 3.0)]
SIZES = [(1, 1), (1, 5), (2, 2), (5, 7), (16, 16), (33, 20)]


def bicubic_model(identity, scale_factor, align_corners=None, shape=None):
    attrs = {"scale_factor": list(scale_factor)}
    if align_corners is not None:
        attrs["align_corners"] = align_corners
    return one_node_model(identity, attrs, ["input"], ["output"], input_shapes={"input": shape})


def run_bicubic(identity, x, scale_factor, align_corners):
    (out,) = run(bicubic_model(identity, scale_factor, align_corners, list(x.shape)), {"input": x})
    return out


def torch_bicubic(x: np.ndarray, scale_factor, align_corners: int, dtype=torch.float32) -> np.ndarray:
    """F.interpolate with the float32 scale factors the node's attribute holds."""
    scales = tuple(float(np.float32(s)) for s in scale_factor)
    t = torch.from_numpy(x).to(dtype)
    return F.interpolate(t, scale_factor=scales, mode="bicubic", align_corners=bool(align_corners)).numpy()


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("align_corners", [0, 1])
@pytest.mark.parametrize("scale_factor", SCALES)
def test_matches_f_interpolate(identity, align_corners, scale_factor):
    rng = np.random.default_rng(int(scale_factor[0] * 10) + align_corners)
    for h, w in SIZES:
        if math.floor(h * np.float32(scale_factor[0])) < 1 or math.floor(w * np.float32(scale_factor[1])) < 1:
            continue
        x = rng.standard_normal((2, 3, h, w)).astype(np.float32)
        out = run_bicubic(identity, x, scale_factor, align_corners)
        expected = torch_bicubic(x, scale_factor, align_corners)
        assert out.shape == expected.shape
        assert_close(out, expected, "same_precision")
        assert_close(out, torch_bicubic(x, scale_factor, align_corners, torch.float64), "float64_reference")


def test_output_size_is_f_interpolates_not_the_plugins():
    """The plugin's size is in * int(scale): 1.5 keeps the size, 0.5 gives nothing, 3.7 triples."""
    x = np.random.default_rng(1).standard_normal((1, 2, 10, 6)).astype(np.float32)
    for scale, size in ((1.5, (15, 9)), (0.5, (5, 3)), (3.7, (37, 22))):
        out = run_bicubic("mmdeploy::TRTBicubicInterpolate", x, (scale, scale), 0)
        assert out.shape == (1, 2) + size
        assert out.shape == torch_bicubic(x, (scale, scale), 0).shape


def test_nan_and_infinity_spread_as_in_pytorch():
    x = np.random.default_rng(2).standard_normal((1, 1, 8, 8)).astype(np.float32)
    x[0, 0, 3, 4] = np.nan
    x[0, 0, 6, 1] = np.inf
    for align in (0, 1):
        out = run_bicubic("opbridge::BicubicInterpolate", x, (2.0, 2.0), align)
        expected = torch_bicubic(x, (2.0, 2.0), align)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
        assert_close(out, expected, "same_precision")


def test_default_align_corners_is_one():
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(np.float32)
    (out,) = run(bicubic_model("mmdeploy::TRTBicubicInterpolate", (2.0, 2.0)), {"input": x})
    assert_close(out, torch_bicubic(x, (2.0, 2.0), 1), "same_precision")


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shape,scale,message", [
    ((2, 3, 4), (2.0, 2.0), "input must have rank 4 [N, C, H, W], got shape [2, 3, 4]"),
    ((1, 1, 0, 4), (2.0, 2.0), "input must have H >= 1 and W >= 1 (as F.interpolate requires), got shape [1, 1, 0, 4]"),
    ((1, 1, 1, 4), (0.5, 2.0), "the output size floor(1 * 0.5) x floor(4 * 2) = 0 x 8 is empty (F.interpolate refuses it too)"),
])
def test_input_errors(identity, shape, scale, message):
    model = bicubic_model(identity, scale, 0)
    assert f"{identity}: {message}" in run_error(model, {"input": np.zeros(shape, np.float32)})


def test_pytorch_refuses_the_empty_output_too():
    with pytest.raises(RuntimeError):
        F.interpolate(torch.zeros(1, 1, 1, 4), scale_factor=(0.5, 2.0), mode="bicubic")


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("attrs,message", [
    ({"scale_factor": [2.0]}, "scale_factor must hold 2 values (height, width), got 1"),
    ({"scale_factor": [2.0, 0.0]}, "scale_factor values must be finite and > 0, got (2, 0)"),
    ({"scale_factor": [2.0, float("nan")]}, "scale_factor values must be finite and > 0, got (2, nan)"),
])
def test_attribute_errors(identity, attrs, message):
    assert f"{identity}: {message}" in session_error(one_node_model(identity, attrs, ["input"], ["output"]))
