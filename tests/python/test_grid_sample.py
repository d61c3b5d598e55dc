"""Grid sampler through the built library in ORT, against torch.nn.functional.grid_sample in
float32 (same arithmetic) and float64 (exact reference)."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import graphs
from graphs import assert_close, cast_around, one_node_model, round_to, run, run_error
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan, tolerance

IDENTITIES = manifest.load()["grid_sample"].identities
MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


def grid_model(identity="opbridge::GridSample", dtype="float32", **attrs):
    """The node with inputs and output in `dtype` (bfloat16 behind casts from and to float32)."""
    full = dict(interpolation_mode=0, padding_mode=0, align_corners=0)
    full.update(attrs)
    full = {k: v for k, v in full.items() if v is not None}
    model = one_node_model(identity, full, ["input", "grid"], ["output"], input_types={"input": dtype, "grid": dtype})
    return cast_around(model, dtype, {"input", "grid"}, {"output"}) if dtype == "bfloat16" else model


def torch_grid_sample(x, grid, mode, padding, align_corners, dtype):
    return F.grid_sample(torch.from_numpy(x).to(dtype), torch.from_numpy(grid).to(dtype), mode, padding,
                         bool(align_corners)).numpy()


SHAPES = [
    ((1, 1, 1, 1), (1, 1)),  # input N, C, H, W; grid H_out, W_out (N shared)
    ((1, 3, 1, 9), (4, 5)),
    ((2, 4, 7, 5), (9, 11)),
    ((2, 2, 33, 47), (17, 300)),  # several 256-pixel blocks, the last one partial
]


@pytest.mark.parametrize("shape,mode,padding,align_corners", list(itertools.product(SHAPES, MODES, PADDINGS, [0, 1])))
def test_matches_torch(shape, mode, padding, align_corners):
    (n, c, h, w), out_hw = shape
    rng = np.random.default_rng(zlib.crc32(repr((shape, mode, padding, align_corners)).encode()))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (n, *out_hw, 2)).astype(np.float32)  # some points outside
    grid[..., 0].flat[::7] = 2.5  # and some far outside
    model = grid_model(interpolation_mode=MODES.index(mode), padding_mode=PADDINGS.index(padding),
                       align_corners=align_corners)
    (actual,) = run(model, {"input": x, "grid": grid})
    assert actual.shape == (n, c, *out_hw)
    assert_close(actual, torch_grid_sample(x, grid, mode, padding, align_corners, torch.float32), "same_precision", "grid_sample")
    if mode != "nearest":  # nearest picks differ from float64 wherever rounding ties move
        assert_close(actual, torch_grid_sample(x, grid, mode, padding, align_corners, torch.float64),
                     "float64_reference", "grid_sample")


@pytest.mark.parametrize("padding", PADDINGS)
def test_nearest_rounds_half_to_even(padding):
    """Grid points exactly between two pixels go to the even one, as in PyTorch's CPU kernel."""
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6)
    # align_corners=1: x = -1 + 2 * k / 5; half-way points k + 0.5.
    k = np.array([0.5, 1.5, 2.5, 3.5, 4.5], np.float32)
    grid = np.stack([-1 + 2 * k / 5, np.zeros_like(k)], axis=-1).reshape(1, 1, 5, 2).astype(np.float32)
    (actual,) = run(grid_model(interpolation_mode=1, padding_mode=PADDINGS.index(padding), align_corners=1),
                    {"input": x, "grid": grid})
    np.testing.assert_array_equal(actual, torch_grid_sample(x, grid, "nearest", padding, 1, torch.float32))


@pytest.mark.parametrize("identity", IDENTITIES)
def test_mmcv_and_mmdeploy_graphs_as_exported(identity):
    """The node as mmcv (register_extra_symbolics, opset 11) and mmdeploy write it: three int
    attributes, IR version 6."""
    model = grid_model(identity, interpolation_mode=0, padding_mode=1, align_corners=0)
    model.opset_import[0].version = 11
    model.ir_version = 6
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]]], np.float32)
    grid = F.affine_grid(torch.from_numpy(theta), [1, 3, 15, 15], align_corners=False).numpy()
    (actual,) = run(model, {"input": x, "grid": grid})
    assert_close(actual, torch_grid_sample(x, grid, "bilinear", "border", 0, torch.float32), "same_precision", "grid_sample")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
def test_non_finite_grid_points_follow_pytorch(mode, padding):
    """NaN and infinite grid points give PyTorch's results: under zeros padding NaN reads nothing
    (NaN for bilinear and bicubic, 0 for nearest); border and reflection clip NaN to 0."""
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    grid = np.array([[[[np.nan, 0.0], [0.0, np.nan], [np.inf, 0.25], [-np.inf, 0.5], [1e30, 0.1],
                       [0.25, 0.25]]]], np.float32)
    (actual,) = run(grid_model(interpolation_mode=MODES.index(mode), padding_mode=PADDINGS.index(padding)),
                    {"input": x, "grid": grid})
    np.testing.assert_array_equal(actual, torch_grid_sample(x, grid, mode, padding, 0, torch.float32))


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [0, 1])
def test_bilinear_dense_grid_with_non_finite_values_follows_pytorch(padding, align_corners):
    """A grid dense enough that the kernel samples zero-bordered copies of the planes (its fast
    bilinear path), with NaN, infinite and huge grid points and infinite and NaN inputs: corners
    outside the input read 0 even next to an infinite value, and NaN appears exactly where
    PyTorch's float64 result has it."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 1, 3, 3], x[1, 2, 5, 6] = np.inf, -np.inf, np.nan
    grid = rng.uniform(-1.3, 1.3, (2, 40, 50, 2)).astype(np.float32)
    specials = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 1.0, -1.0, 1.1, -1.1], np.float32)
    picked = rng.random(grid.shape) < 0.15
    grid[picked] = rng.choice(specials, picked.sum())
    (actual,) = run(grid_model(padding_mode=PADDINGS.index(padding), align_corners=align_corners),
                    {"input": x, "grid": grid})
    expected = torch_grid_sample(x, grid, "bilinear", padding, align_corners, torch.float64)
    assert np.isnan(expected).any() and np.isinf(expected).any()
    assert_close(actual, expected, "float64_reference", "grid_sample")


@pytest.mark.parametrize("x_shape,grid_shape,message", [
    ((1, 2, 4), (1, 3, 3, 2), "input must have rank 4 [N, C, H, W] or 5 [N, C, D, H, W], got shape [1, 2, 4]"),
    ((1, 2, 4, 4, 4, 4), (1, 3, 3, 3, 3), "input must have rank 4 [N, C, H, W] or 5 [N, C, D, H, W], got shape "
                                          "[1, 2, 4, 4, 4, 4]"),
    ((1, 2, 4, 4), (1, 3, 3, 3), "grid must have shape [N, H_out, W_out, 2] for a 4-D input, got shape [1, 3, 3, 3]"),
    ((1, 2, 4, 4, 4), (1, 3, 3, 3, 2), "grid must have shape [N, D_out, H_out, W_out, 3] for a 5-D input, got shape "
                                       "[1, 3, 3, 3, 2]"),
    ((1, 2, 4, 4, 4), (1, 3, 3, 3), "grid must have shape [N, D_out, H_out, W_out, 3] for a 5-D input, got shape "
                                    "[1, 3, 3, 3]"),
    ((2, 2, 4, 4), (3, 3, 3, 2), "grid batch size 3 must equal input batch size 2 (input [2, 2, 4, 4], grid [3, 3, 3, 2])"),
    ((2, 2, 4, 4, 4), (1, 3, 3, 3, 3), "grid batch size 1 must equal input batch size 2"),
    ((1, 2, 0, 4), (1, 3, 3, 2), "input must have non-empty spatial dimensions, got shape [1, 2, 0, 4]"),
    ((1, 2, 3, 4, 0), (1, 3, 3, 3, 3), "input must have non-empty spatial dimensions, got shape [1, 2, 3, 4, 0]"),
])
def test_bad_inputs_fail_at_run_time(x_shape, grid_shape, message):
    feeds = {"input": np.zeros(x_shape, np.float32), "grid": np.zeros(grid_shape, np.float32)}
    assert f"opbridge::GridSample: {message}" in run_error(grid_model(), feeds)


@pytest.mark.parametrize("mode,padding,align_corners", [
    (0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 0, 0), (0, 1, 0), (1, 1, 1), (1, 0, 0), (2, 1, 1), (2, 0, 0),
])
def test_width_beyond_float_precision_stays_in_bounds(mode, padding, align_corners):
    """Width 2^24 + 4: W - 1 rounds up to W in float32, and the bound check in float let the
    right edge read one element past the input (issue 11). Follows PyTorch, which makes the same
    float rounding and checks bounds on integers, except where PyTorch itself reads past the input
    (border and reflection padding clamp to float(W - 1) = W): opbridge clamps to the largest
    float <= W - 1, a pixel at the right edge."""
    width = 2**24 + 4
    # The input is a view of a buffer whose next element is a sentinel: a read past the end shows.
    buffer = np.append(np.linspace(1.0, 2.0, width, dtype=np.float32), np.float32(1000.0))
    x = buffer[:width].reshape(1, 1, 1, width)
    assert x.flags.c_contiguous and not x.flags.owndata
    gx = np.array([1.0, 1.0 - 2.0**-23, 1.0 - 2.0**-22, 0.999, 0.5, -1.0, 1.0 + 2.0**-23], np.float32)
    grid = np.stack([gx, np.zeros_like(gx)], axis=-1).reshape(1, 1, -1, 2)
    (actual,) = run(grid_model(interpolation_mode=mode, padding_mode=padding, align_corners=align_corners),
                    {"input": x, "grid": grid})
    expected = torch_grid_sample(x, grid, MODES[mode], PADDINGS[padding], align_corners, torch.float32)
    torch_read_past_the_end = expected == 1000.0
    # (the clamped padding modes, except bicubic without align_corners, whose taps stay below W)
    assert torch_read_past_the_end.any() == (padding != 0 and (mode != 2 or align_corners == 1))
    expected[torch_read_past_the_end] = x[0, 0, 0, -1]  # the edge: 2.0 (its neighbours differ by 6e-8)
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=0)


# ---- volumetric: F.grid_sample on 5-D input (ATen's grid_sampler_3d) -------------------------------

MODES_3D = ["bilinear", "nearest"]  # bilinear is trilinear; PyTorch has no 3-D bicubic
SHAPES_3D = [
    ((1, 1, 1, 1, 1), (1, 1, 1)),  # input N, C, D, H, W; grid D_out, H_out, W_out (N shared)
    ((1, 3, 1, 5, 9), (2, 4, 5)),
    ((2, 4, 5, 6, 7), (3, 9, 11)),
    ((1, 2, 9, 17, 33), (8, 30, 70)),  # more than one chunk of 16384 points
]


@pytest.mark.parametrize("shape,mode,padding,align_corners",
                         list(itertools.product(SHAPES_3D, MODES_3D, PADDINGS, [0, 1])))
def test_volumetric_matches_torch_bit_for_bit(shape, mode, padding, align_corners):
    """PyTorch's CPU 3-D sampler is scalar code without fused multiply-adds on every CPU: the same bits."""
    (n, c, d, h, w), out_dhw = shape
    rng = np.random.default_rng(zlib.crc32(repr((shape, mode, padding, align_corners)).encode()))
    x = rng.standard_normal((n, c, d, h, w)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (n, *out_dhw, 3)).astype(np.float32)  # some points outside
    grid[..., 2].flat[::7] = 2.5  # and some far outside
    grid[..., 0].flat[1::5] = np.round(grid[..., 0].flat[1::5] * 6) / 6  # ties for nearest
    model = grid_model(interpolation_mode=MODES.index(mode), padding_mode=PADDINGS.index(padding),
                       align_corners=align_corners)
    (actual,) = run(model, {"input": x, "grid": grid})
    expected = torch_grid_sample(x, grid, mode, padding, align_corners, torch.float32)
    assert actual.shape == expected.shape == (n, c, *out_dhw)
    np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32))
    if mode == "bilinear":
        assert_close(actual, torch_grid_sample(x, grid, mode, padding, align_corners, torch.float64),
                     "float64_reference", "grid_sample")


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("mode,padding,align_corners", list(itertools.product(MODES_3D, PADDINGS, [0, 1])))
def test_volumetric_non_finite_and_huge_grid_values_as_torch(identity, mode, padding, align_corners):
    """NaN, infinite and huge coordinates, and exact corners and edges, in every identity: PyTorch's
    3-D sampler gives 0 for a NaN point with zeros padding (the 2-D one gives NaN) and clips NaN to the
    last index with border and reflection padding; opbridge follows it."""
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    values = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, 0.5, -0.5, 1.0, -1.0, 0.0, 1.0 - 2**-23], np.float32)
    grid = np.stack(np.meshgrid(values, values, values[::-1], indexing="ij"), axis=-1)[None].astype(np.float32)
    (actual,) = run(grid_model(identity, interpolation_mode=MODES.index(mode), padding_mode=PADDINGS.index(padding),
                               align_corners=align_corners), {"input": x, "grid": grid})
    expected = torch_grid_sample(x, grid, mode, padding, align_corners, torch.float32)
    np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32))


def test_volumetric_bicubic_is_an_error():
    x = np.ones((2, 3, 4, 5, 6), np.float32)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(torch.from_numpy(x), torch.zeros(2, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    message = run_error(grid_model(interpolation_mode=2), {"input": x, "grid": np.zeros((2, 1, 1, 1, 3), np.float32)})
    assert ("opbridge::GridSample: bicubic interpolation (interpolation_mode 2) needs a 4-D input, as in PyTorch; got a "
            "5-D input of shape [2, 3, 4, 5, 6]") in message


# --- half precision: float16 and bfloat16 storage, float32 arithmetic ------------------------------------

HALF = ["float16", "bfloat16"]


def run_half(dtype, x, grid, **attrs) -> np.ndarray:
    """The op's output in `dtype` on x and grid rounded to `dtype`, as float32."""
    (out,) = graphs.run_half(grid_model(dtype=dtype, **attrs), {"input": x, "grid": grid}, dtype)
    return out


# A dense grid (the kernel samples bordered float32 copies of the planes), a sparse one (it reads the
# half planes at each tap), a volume (no bicubic there: test_volumetric_bicubic_is_an_error).
HALF_CASES = [(mode, padding, x_shape, grid_shape)
              for mode, padding in [("bilinear", "zeros"), ("bilinear", "reflection"), ("nearest", "border"),
                                    ("bicubic", "zeros"), ("bilinear", "border")]
              for x_shape, grid_shape in [((2, 3, 33, 47), (2, 40, 60, 2)), ((1, 2, 90, 110), (1, 5, 7, 2)),
                                          ((1, 2, 6, 9, 11), (1, 5, 7, 8, 3))]
              if not (len(x_shape) == 5 and mode == "bicubic")]


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("mode,padding,x_shape,grid_shape", HALF_CASES)
def test_half_is_the_float32_result_rounded_once(dtype, mode, padding, x_shape, grid_shape):
    """Bit for bit the float32 op's output on the half values, rounded once; and against PyTorch's
    float32 grid_sample on the half values (what autocast runs), rounded, within the half tolerance."""
    rng = np.random.default_rng(zlib.crc32(f"half/{dtype}/{mode}/{padding}/{x_shape}".encode()))
    x = rng.standard_normal(x_shape).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, grid_shape).astype(np.float32)
    grid.flat[::13] = np.nan
    attrs = dict(interpolation_mode=MODES.index(mode), padding_mode=PADDINGS.index(padding), align_corners=0)
    got = run_half(dtype, x, grid, **attrs)
    (exact,) = run(grid_model(**attrs), {"input": round_to(x, dtype), "grid": round_to(grid, dtype)})
    assert same_bits_but_nan(round_to(exact, dtype), got)
    reference = torch_grid_sample(round_to(x, dtype), round_to(grid, dtype), mode, padding, 0, torch.float32)
    tol = tolerance("half", dtype)
    np.testing.assert_allclose(got, round_to(reference, dtype), rtol=tol.rtol, atol=tol.atol, equal_nan=True)


@pytest.mark.parametrize("dtype", HALF)
def test_half_edge_cases(dtype):
    """Values past float16's largest (65,504: infinity), subnormal maps (kept, not flushed), and grid
    points whose rounding moves them across a pixel: each the float32 op's result on the half values,
    rounded once."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 40, 3000)).astype(np.float32)
    x[0, 0] = np.abs(x[0, 0]) * 1e5  # float16: mostly infinite
    x[0, 1] *= 1e-6  # float16: subnormal
    # x in [-1, 1] across 3000 columns: float16's spacing near 0.9 is 2^-11, 0.73 px: the rounded
    # points sample other pixels than the float32 ones.
    grid = np.stack(np.meshgrid(np.linspace(0.8, 0.95, 50), np.linspace(-1, 1, 20)), axis=-1)[None].astype(np.float32)
    got = run_half(dtype, x, grid)
    (exact,) = run(grid_model(), {"input": round_to(x, dtype), "grid": round_to(grid, dtype)})
    assert same_bits_but_nan(round_to(exact, dtype), got)
    if dtype == "float16":
        assert not np.isfinite(got[0, 0]).all()
        small = np.abs(got[0, 1])
        assert ((small > 0) & (small < 6.1e-5)).any()
    (unrounded,) = run(grid_model(), {"input": round_to(x, dtype), "grid": grid})
    assert not np.array_equal(round_to(unrounded, dtype)[0, 1], got[0, 1])
