"""opbridge::Inverse through the built library in ORT, against numpy.linalg.inv in float64 (an
independent reference) and torch.linalg.inv; singular matrices as opbridge, PyTorch and ORT's
com.microsoft::Inverse treat them; its shape errors (attributes, dtypes, threads and shape inference
are test_conformance.py's). Export round trips are in test_inverse_export.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import opbridge
from graphs import one_node_model, run, run_error
from inverse_reference import elimination_is_exact, exact_info, sgetf2_inverse

f32 = np.float32
NAN, INF = float("nan"), float("inf")
IDENTITY = "opbridge::Inverse"
ORDERS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33, 64]
BATCHES = [(), (5,), (2, 3), (1, 2, 1, 2)]


def inverse_model(check_errors: int | None = None, with_info: bool = False):
    attrs = {} if check_errors is None else {"check_errors": check_errors}
    return one_node_model(IDENTITY, attrs, ["input"], ["output"] + (["info"] if with_info else []))


def invert(a: np.ndarray, check_errors: int = 0):
    """output and info, as ORT computes them."""
    output, info = run(inverse_model(check_errors, with_info=True), {"input": a})
    assert output.dtype == f32 and output.shape == a.shape
    assert info.dtype == np.int32 and info.shape == a.shape[:-2]
    return output, info


def well_conditioned(batch: tuple, m: int, seed: int) -> np.ndarray:
    """Random matrices with condition numbers below ~10 that need row swaps: standard normal entries
    plus 2 sqrt(m) on the diagonal, rows shuffled."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, m)) + 2.0 * np.sqrt(m) * np.eye(m)
    rows = np.argsort(rng.random(batch + (m,)), axis=-1)
    return np.take_along_axis(a, rows[..., None], axis=-2).astype(f32)


def ill_conditioned(count: int, m: int, log10_cond: float, seed: int) -> np.ndarray:
    """Invertible matrices U diag(s) V^T with singular values from 1 down to 10^-log10_cond."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.standard_normal((count, m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((count, m, m)))
    s = np.logspace(0, -log10_cond, m)
    return (u * s[None, None, :] @ np.swapaxes(v, -1, -2)).astype(f32)


def normwise_error(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per matrix: max |x - ref| / max |ref|."""
    return np.abs(x.astype(np.float64) - ref).max(axis=(-2, -1)) / np.abs(ref).max(axis=(-2, -1))


def assert_inverse_close(x, ref, comparison: str, scale=1.0):
    """Per matrix within the tolerance table's rtol (times `scale`, e.g. a condition number) of
    the largest entry of `ref`."""
    tol = opbridge.tolerances.tolerance(comparison, x.dtype, "inverse")
    error = normwise_error(x, ref)
    assert np.all(error <= tol.rtol * np.asarray(scale)), f"{comparison}: worst {error.max():.3g}"


def reference(a: np.ndarray) -> np.ndarray:
    return np.linalg.inv(a.astype(np.float64))


# --- values ----------------------------------------------------------------------------------------


# Every order at every batch shape, except the largest orders at rank 6 (their time, not coverage).
SWEEP = [(m, batch) for m in ORDERS for batch in BATCHES if m <= 16 or len(batch) <= 2]


@pytest.mark.parametrize("m,batch", SWEEP, ids=[f"{m}-{'x'.join(map(str, b)) or 'rank2'}" for m, b in SWEEP])
def test_matches_float64_reference(m, batch):
    a = well_conditioned(batch, m, seed=m * 10 + len(batch))
    output, info = invert(a)
    assert_inverse_close(output, reference(a), "float64_reference")
    assert np.all(info == 0)
    # The default (check_errors = 1) and a node without the info output compute the same.
    (plain,) = run(inverse_model(), {"input": a})
    assert np.array_equal(plain, output)


@pytest.mark.parametrize("m", [2, 4, 8, 9, 33, 64])
def test_matches_torch_linalg_inv(m):
    a = well_conditioned((40,), m, seed=m)
    output, _ = invert(a)
    expected = torch.linalg.inv(torch.from_numpy(a)).numpy().astype(np.float64)
    assert_inverse_close(output, expected, "same_precision")


@pytest.mark.parametrize("m,log10_cond", [(3, 3), (4, 4), (8, 4), (16, 3), (33, 4), (64, 5)])
def test_ill_conditioned_matrices(m, log10_cond):
    """Error bounded by the condition number, as for any float32 inverse; PyTorch's and ORT's are
    held to the same bound."""
    a = ill_conditioned(30, m, log10_cond, seed=m)
    ref = reference(a)
    cond = np.linalg.cond(a.astype(np.float64))
    assert cond.min() > 10 ** (log10_cond - 1)
    output, info = invert(a)
    assert np.all(info == 0)
    assert_inverse_close(output, ref, "ill_conditioned", scale=cond)
    microsoft = run(one_node_model("com.microsoft::Inverse", {}, ["input"], ["output"]), {"input": a})[0]
    eager = torch.linalg.inv(torch.from_numpy(a)).numpy()
    for other in (microsoft, eager):
        assert_inverse_close(other, ref, "ill_conditioned", scale=cond)


def test_closed_forms():
    """2x2: [[a, b], [c, d]]^-1 = [[d, -b], [-c, a]] / (ad - bc); diagonal: reciprocals, correctly
    rounded; a permutation: its transpose; 1x1: the reciprocal."""
    a = np.array([[[4, 7], [2, 6]], [[1, 2], [3, 4]]], f32)
    expected = np.array([[[0.6, -0.7], [-0.2, 0.4]], [[-2, 1], [1.5, -0.5]]])
    assert_inverse_close(invert(a)[0], expected, "float64_reference")
    for m in (3, 8, 9, 20):
        d = np.arange(1, m + 1, dtype=f32) * f32(0.7)
        assert np.array_equal(invert(np.diag(d))[0], np.diag(f32(1) / d))
        p = np.eye(m, dtype=f32)[np.random.default_rng(m).permutation(m)]
        assert np.array_equal(invert(p)[0], p.T)
    ones = np.array([[[2.0]], [[-0.25]], [[3.0]]], f32)
    assert np.array_equal(invert(ones)[0], f32(1) / ones)


def test_a_matrix_does_not_depend_on_its_batch():
    """Small matrices are inverted 16 to a vector: alone, or in any place of a batch, the same bits."""
    a = well_conditioned((45,), 5, seed=3)
    batch = invert(a)[0]
    for i in (0, 15, 16, 44):
        assert np.array_equal(invert(a[i:i + 1])[0][0], batch[i])


# --- shapes ----------------------------------------------------------------------------------------


def test_high_rank_input():
    shape = (2, 1, 3, 1, 1, 4, 4)
    a = well_conditioned(shape[:-2], shape[-1], seed=1)
    output, info = invert(a)
    assert output.shape == shape and info.shape == shape[:-2] and np.all(info == 0)
    assert_inverse_close(output, reference(a), "float64_reference")


def test_many_empty_matrices():
    """2^40 matrices of order 0: an empty output, and no scratch memory for their info. (A count
    beyond int64, which numpy cannot build, is an error: tests/cpp/inverse_test.cc.)"""
    huge = 2 ** 40
    (output,) = run(inverse_model(), {"input": np.zeros((huge, 0, 0), f32)})
    assert output.shape == (huge, 0, 0)


# --- singular matrices -------------------------------------------------------------------------------
#
# opbridge's rule: a matrix is singular when its float32 LU in reference LAPACK's order (sgetf2)
# meets an exactly zero pivot; info is that pivot's step (from 1). The rule is the same on every
# CPU, and inverse_reference.sgetf2_inverse computes it independently, bit for bit.
# PyTorch's verdict comes from the LAPACK kernels MKL picks for the CPU it runs on. Where rounding
# decides whether a pivot is exactly zero (the integer ramps: 1/7 and 4/7 are not exact in float32)
# those kernels disagree: on an AVX-512 Xeon MKL inverts [[1, 2, 3], [4, 5, 6], [7, 8, 9]] with info
# 0, with its SSE4.2 kernels (MKL_ENABLE_INSTRUCTIONS=SSE4_2) it reports info 3. So PyTorch is the
# reference only for matrices whose elimination is exact in float32 whatever the order of its
# operations (inverse_reference.elimination_is_exact): there every LU with partial pivoting finds
# the same zero pivot.


def singular_from_factors(m: int, rank: int, seed: int) -> np.ndarray:
    """P^T L U of the given rank < m: U's first `rank` rows have powers of two on the diagonal and
    small integers right of it, its other rows are zero; L's multipliers are in {0, +-1/2, +-1/4}.
    Each step's pivot row is then the one L U puts there (the others hold at most half its
    magnitude), every value of the elimination is exact in float32, and pivot rank + 1 is the
    first zero one."""
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.integers(-3, 4, (m, m))).astype(np.float64)
    np.fill_diagonal(upper, 2.0 ** rng.integers(0, 4, m) * rng.choice([-1, 1], m))
    upper[rank:] = 0
    lower = np.tril(rng.choice([0, 0.5, -0.5, 0.25, -0.25], (m, m)), -1) + np.eye(m)
    return (lower @ upper)[rng.permutation(m)]


# Matrices singular in exact arithmetic whose float32 elimination is exact (checked below): every
# LAPACK finds their zero pivot, so opbridge's info is PyTorch's on every CPU.
EXACTLY_SINGULAR = {
    "zeros": np.zeros((4, 4)),
    "repeated_row": np.array([[2, 5, 6], [4, 2, 8], [2, 5, 6]]),
    "zero_column": np.array([[1, 0, 3], [4, 0, 6], [2, 0, 11]]),
    "rows_doubled": np.array([[1, 2, 4], [4, 4, 8], [2, 4, 8]]),
    "ones_5x5": np.ones((5, 5)),
    "rank_1_6x6": singular_from_factors(6, 1, seed=1),
    "rank_7_12x12": singular_from_factors(12, 7, seed=2),
    "rank_32_33x33": singular_from_factors(33, 32, seed=3),
}
# Singular in exact arithmetic, but rounding decides whether a float32 pivot comes out exactly
# zero: opbridge's rule finds them singular (its info here); PyTorch may not, depending on the CPU.
ROUNDING_DECIDED = {
    "ramp_3x3": (np.arange(1, 10).reshape(3, 3), 3),
    "ramp_4x4": (np.arange(1, 17).reshape(4, 4), 4),
    "ramp_12x12": (np.arange(1, 145).reshape(12, 12), 12),
    "dependent_10x10": (np.arange(100).reshape(10, 10) % 7, 8),
}


@pytest.mark.parametrize("name", EXACTLY_SINGULAR)
def test_exactly_singular_info_matches_pytorch(name):
    matrix = EXACTLY_SINGULAR[name]
    assert elimination_is_exact(matrix) and exact_info(matrix) > 0
    a = np.stack([matrix, np.eye(len(matrix)) * 2]).astype(f32)
    output, info = invert(a)
    _, torch_info = torch.linalg.inv_ex(torch.from_numpy(a))
    assert info.tolist() == torch_info.tolist() == [exact_info(matrix), 0]
    assert not np.all(np.isfinite(output[0]))  # inf or NaN where the solve divided by the zero pivot
    assert np.array_equal(output[1], np.eye(len(matrix), dtype=f32) / 2)  # the other matrix is unaffected
    for fn in (torch.linalg.inv, torch.inverse):  # raise, as the default export does (check_errors = 1)
        with pytest.raises(RuntimeError, match="singular"):
            fn(torch.from_numpy(a))


@pytest.mark.parametrize("name", ROUNDING_DECIDED)
def test_rounding_decided_singularity_follows_the_reference_order(name):
    """opbridge's verdict and inverse are the float32 reference order's, bit for bit, on any CPU.
    PyTorch's verdict depends on the CPU's LAPACK kernels; either way it is consistent with its
    inverse: info > 0 with non-finite entries, or info 0 with huge finite ones."""
    matrix, expected_info = ROUNDING_DECIDED[name]
    assert not elimination_is_exact(matrix) and exact_info(matrix) > 0
    a = np.stack([matrix, np.eye(len(matrix)) * 2]).astype(f32)
    output, info = invert(a)
    reference_output, reference_info = sgetf2_inverse(a)
    assert info.tolist() == reference_info.tolist() == [expected_info, 0]
    assert np.array_equal(output, reference_output, equal_nan=True)
    torch_output, torch_info = torch.linalg.inv_ex(torch.from_numpy(a))
    if int(torch_info[0]) > 0:
        assert not np.all(np.isfinite(torch_output[0].numpy()))
    else:
        assert np.all(np.isfinite(torch_output[0].numpy())) and torch_output[0].abs().max() > 1e5
    assert int(torch_info[1]) == 0


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 9, 12, 33])
def test_bits_match_the_reference_order(m):
    """Well-conditioned, ill-conditioned, integer and non-finite matrices: the inverse and info are
    the float32 reference order's (sgetf2 + strsm) bit for bit, on both paths (order <= 8 in
    vector lanes, larger one at a time)."""
    rng = np.random.default_rng(m)
    a = np.concatenate([
        well_conditioned((4,), m, seed=m),
        ill_conditioned(3, m, 4, seed=m),
        rng.integers(-3, 4, (9, m, m)).astype(f32),  # small integers: many exact zero pivots
        rng.standard_normal((2, m, m)).astype(f32) * f32(1e-38),  # subnormal pivots: divided, not scaled
    ])
    a[-1, 0, m - 1] = np.nan
    a[-2, m - 1, 0] = np.inf
    output, info = invert(a)
    reference_output, reference_info = sgetf2_inverse(a)
    assert np.array_equal(info, reference_info)
    assert np.array_equal(output, reference_output, equal_nan=True)


def test_singular_is_an_error_with_check_errors():
    a = well_conditioned((2, 3), 4, seed=9)
    a[1, 2] = ROUNDING_DECIDED["ramp_4x4"][0]
    a[1, 1, 0] = 0.0  # a zero row (the pivot only when nothing else is left); named first, in batch order
    message = run_error(inverse_model(), {"input": a})
    assert (f"{IDENTITY}: the matrix input[1, 1, :, :] is singular: diagonal element 4 (counting from 1) of U "
            "in its LU factorization with partial pivoting is exactly zero, as torch.linalg.inv reports it; "
            "with check_errors = 0 its inverse holds inf or NaN and the info output tells which matrices "
            "are singular") in message
    ramp = ROUNDING_DECIDED["ramp_3x3"][0].astype(f32)
    assert f"{IDENTITY}: the matrix input[:, :] is singular: diagonal element 3 " in run_error(
        inverse_model(1), {"input": ramp})
    # With check_errors = 0 every matrix is inverted and info tells.
    output, info = invert(a, check_errors=0)
    assert info.tolist() == [[0, 0, 0], [0, 4, 4]]
    assert_inverse_close(output[0], reference(a[0]), "float64_reference")


def test_com_microsoft_inverse_never_reports_singular():
    """ORT's com.microsoft::Inverse gives inf or NaN for an exactly singular matrix, and finite
    garbage where rounding left a nonzero pivot in its (Eigen) elimination, with no error."""
    session = opbridge.create_session(one_node_model("com.microsoft::Inverse", {}, ["input"], ["output"]))
    (zeros,) = session.run(None, {"input": np.zeros((1, 4, 4), f32)})
    assert not np.any(np.isfinite(zeros))
    (ramp,) = session.run(None, {"input": ROUNDING_DECIDED["ramp_12x12"][0].astype(f32)[None]})
    assert np.all(np.isfinite(ramp)) and np.abs(ramp).max() > 1e6


def test_nearly_singular_matrix_is_inverted():
    """Singular only in exact arithmetic (before its entries are rounded to float32), with a nonzero
    pivot after rounding: opbridge inverts it to huge values, info 0, the reference order's bits.
    PyTorch's LAPACK may meet an exactly zero pivot on some CPUs: either outcome is consistent."""
    a = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]], f32)
    output, info = invert(a)
    assert int(info) == 0 and np.all(np.isfinite(output)) and np.abs(output).max() > 1e6
    assert np.array_equal(output, sgetf2_inverse(a)[0])
    torch_output, torch_info = torch.linalg.inv_ex(torch.from_numpy(a))
    if int(torch_info) == 0:
        assert np.all(np.isfinite(torch_output.numpy())) and torch_output.abs().max() > 1e5
    else:
        assert not np.all(np.isfinite(torch_output.numpy()))


@pytest.mark.parametrize("m", [3, 12])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_non_finite_entries(m, value):
    """A NaN entry makes that matrix's inverse NaN, as in PyTorch; an infinite one gives what the
    elimination in the reference order gives (NaN, or finite values where the infinity only scales
    a multiplier to 0; PyTorch's LAPACK may order it differently, so only the entries finite in both
    are compared with it); no error, and the other matrices are unaffected."""
    a = well_conditioned((3,), m, seed=m)
    a[1, 1, 2] = value
    (output,) = run(inverse_model(1), {"input": a})
    _, info = invert(a)
    assert info.tolist() == [0, 0, 0]
    assert np.array_equal(output[1], sgetf2_inverse(a[1])[0], equal_nan=True)
    expected = torch.linalg.inv(torch.from_numpy(a[1])).numpy()
    if np.isnan(value):
        assert np.all(np.isnan(output[1])) and np.all(np.isnan(expected))
    finite = np.isfinite(expected) & np.isfinite(output[1])
    if finite.any():
        assert_inverse_close(np.where(finite, output[1], 0), np.where(finite, expected, 0).astype(np.float64),
                             "same_precision")
    assert_inverse_close(output[[0, 2]], reference(a[[0, 2]]), "float64_reference")


# --- errors ----------------------------------------------------------------------------------------


def test_shape_errors():
    assert (f"{IDENTITY}: input must have rank >= 2 [..., M, M] (a batch of square matrices), got shape [4]"
            in run_error(inverse_model(), {"input": np.ones(4, f32)}))
    assert (f"{IDENTITY}: input must hold square matrices [..., M, M], got shape [2, 3, 4] (3 rows, 4 columns)"
            in run_error(inverse_model(), {"input": np.ones((2, 3, 4), f32)}))
    assert (f"{IDENTITY}: input must hold square matrices [..., M, M], got shape [0, 2] (0 rows, 2 columns)"
            in run_error(inverse_model(), {"input": np.ones((0, 2), f32)}))

