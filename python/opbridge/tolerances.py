"""The one tolerance table: how close opbridge's outputs must be to their references.

Keyed by (op, comparison, dtype), where op "*" applies to every op without an entry of its own.
Every entry says why it is what it is. Integer outputs (indices, counts) are always compared
exactly.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    why: str


TOLERANCES: dict[tuple[str, str, str], Tolerance] = {
    # The ORT kernel against the PyTorch op it follows, both in float32.
    ("*", "same_precision", "float32"): Tolerance(
        1e-5, 1e-5, "same float32 formulas as the PyTorch op; only summation order and the last bit differ"
    ),
    ("grid_sample", "same_precision", "float32"): Tolerance(
        1e-5, 5e-5,
        "PyTorch's CPU kernel fuses multiply-adds (FMA) in its coordinate arithmetic on AVX2 machines; "
        "opbridge does not, so that results do not depend on the CPU. One ulp of a coordinate near "
        "50 px (4e-6) times a steep gradient of random data gives up to ~2e-5; either result is as "
        "close to the float64 one",
    ),
    ("paste_masks", "same_precision", "float32"): Tolerance(
        1e-5, 1e-6,
        "bit for bit with PyTorch's AVX2 / AVX-512 bilinear F.interpolate (what it runs on any CPU with "
        "AVX2; the tests compare exactly there); its unfused build (no AVX2, or ATEN_CPU_CAPABILITY="
        "default) rounds each multiply-add twice: mask probabilities in [0, 1] move by an ulp or two",
    ),
    ("heatmaps_to_keypoints", "same_precision", "float32"): Tolerance(
        1e-4, 1e-4,
        "bit for bit with PyTorch's AVX2 / AVX-512 bicubic F.interpolate (as paste_masks); its unfused "
        "build rounds the four-tap sums twice per multiply-add, and the scores (heatmap maxima, ~1-10) "
        "move by up to a few 1e-6; a maximum may then move to a nearly equal neighbour",
    ),
    # The ORT kernel (float32) against a float64 reference computed from the same float32 inputs.
    ("deform_conv", "same_precision", "float32"): Tolerance(
        1e-5, 1e-4,
        "each output sums K = (C / groups) * kh * kw products, in k order with fused multiply-adds, "
        "where PyTorch's GEMM blocks and reorders the sum: the difference scales with the sum of "
        "|products| (about 350 at K = 576 of unit-scale data, so ~2e-5 absolute near zero outputs)",
    ),
    ("group_norm", "float64_reference", "float32"): Tolerance(
        2e-6, 2e-6,
        "group and instance normalization (one kernel): float64 statistics, then three float32 "
        "operations per output, (x - m) * a + b, each rounding values up to |y| and |b|: a few ulps "
        "of outputs up to ~15 (measured: 1.4e-6 at most on the norm workload)",
    ),
    ("scaled_dot_product_attention", "float64_reference", "float32"): Tolerance(
        1e-5, 2e-5,
        "the scores q k^T / sqrt(E) are rounded to float32 as in PyTorch, and one ulp of a score s "
        "moves exp(s - max) by |s| x 6e-8 relative; the exp polynomial is within 1.01 ulp. Measured "
        "against float64: attn within 5.0e-7 and out within 4.6e-6 for unit-normal inputs (E = 32, "
        "900 keys, a unit-normal x 3 mask), out within 1.1e-5 for q and k 3x larger, as far as "
        "PyTorch's own float32 result (1.0e-5)",
    ),
    ("*", "float64_reference", "float32"): Tolerance(
        1e-4, 1e-4,
        "sample coordinates are computed in float32, as PyTorch does: at coordinates up to ~300 px "
        "their rounding (~2e-5 px) times the local gradient of random data reaches ~5e-5",
    ),
    # opbridge::Inverse, compared matrix by matrix relative to the largest entry of the reference
    # inverse, |x - ref| <= rtol * max |ref| (an elementwise tolerance would fail on entries near
    # zero, whose error is set by the largest ones); float32 inputs, the reference in float64.
    ("inverse", "float64_reference", "float32"): Tolerance(
        2e-6, 0.0,
        "float32 LU with partial pivoting (LAPACK's sgetf2 + sgetrs order) of matrices with condition "
        "numbers below ~10 is within a few ulps of the largest entry, a slowly growing factor of the "
        "order: up to 6.5e-7 measured for orders 1 to 64",
    ),
    ("inverse", "ill_conditioned", "float32"): Tolerance(
        4e-8, 0.0,
        "per unit of the matrix's condition number (2-norm): any float32 inverse errs by about "
        "cond(A) * 2^-24 (6e-8) times a modest factor; opbridge, torch.linalg.inv and "
        "com.microsoft::Inverse all stay below 1.5e-8 * cond on matrices of orders 3 to 64 with "
        "condition numbers 1e3 to 1e5",
    ),
    ("inverse", "same_precision", "float32"): Tolerance(
        2e-6, 0.0,
        "against torch.linalg.inv (MKL): the same float32 method with some operations ordered "
        "differently, a few ulps of the largest entry for well-conditioned matrices (7e-7 measured)",
    ),
    # An identity's CUDA kernel against its CPU twin on the same inputs (./run.sh test-gpu).
    ("*", "cuda_twin", "float32"): Tolerance(
        0.0, 0.0,
        "the CUDA kernels run the CPU kernels' per-element code (kernels/shared/, compiled without "
        "contracted multiply-adds on both sides): the same bits (RoIAlign's included: its CUDA kernels "
        "sum each bin separably, as the CPU kernel does)",
    ),
    # The library on another CPU architecture (aarch64 under emulation: ./run.sh test's aarch64 lane)
    # against the x86-64 library's outputs for the same inputs (tests/wheels).
    ("*", "cross_architecture", "float32"): Tolerance(
        0.0, 0.0,
        "the kernels are the same C++ on both, built without contracted multiply-adds; the products and "
        "the attention's exp fuse them explicitly on aarch64 as at x86-64-v3 and v4 (every aarch64 CPU "
        "has FMA): the same bits, but for a NaN's sign and payload, which IEEE 754 leaves to the CPU",
    ),
    # The GPU bench's check column: opbridge's CUDA kernels against PyTorch's on CUDA.
    ("*", "gpu_bench", "float32"): Tolerance(
        0.0, 3e-4,
        "PyTorch's CUDA kernels fuse the multiply-adds of their sample coordinates (nvcc contracts by "
        "default), opbridge's do not: a few ulps of a coordinate near 75 px (8e-6 px each) times the "
        "gradient of the workloads' unit-normal random maps (up to ~5 per px) move a sample by ~1e-4 "
        "(measured on an H100: 1.2e-4 on roi_align.mask); either is as close to the float64 result",
    ),
    # An op on half inputs against PyTorch's op computing in float32 on the same half values (what
    # autocast runs), its result rounded to the half dtype: opbridge computes in float32 and rounds once.
    ("*", "half", "float16"): Tolerance(
        1e-3, 1e-3,
        "both round a float32 result once to float16 (2^-11 relative); where the float32 results differ "
        "in their last bits (summation order), the roundings can fall either side of a float16 value: "
        "1 ulp, 2^-10 relative (measured on RoIAlign: 110 of 470,400 elements 1 ulp apart)",
    ),
    ("*", "half", "bfloat16"): Tolerance(
        8e-3, 8e-3, "as float16, at bfloat16's 8-bit significand: 1 ulp is 2^-7 relative",
    ),
    # A whole exported model in ORT against eager PyTorch (opbridge.verify and the demo).
    ("*", "model", "float32"): Tolerance(
        1e-4, 1e-4, "ORT's and PyTorch's convolutions and matrix products sum in different orders"
    ),
    ("*", "model", "float64"): Tolerance(1e-9, 1e-9, "as float32, at float64 precision"),
    # A whole detection model (opbridge.verify(..., comparison="detector")).
    ("*", "detector", "float32"): Tolerance(
        1e-4, 1e-2,
        "a detector's boxes are pixel coordinates decoded with exp() from regressions that pass through "
        "dozens of convolutions, which ORT and PyTorch sum in different orders: torchvision's ResNet-50 FPN "
        "models with random weights at 224-320 px put boxes ~1e-2 px apart (scores ~3e-5, mask "
        "probabilities ~5e-4, keypoints ~1e-2 px); 1e-2 px is far below any visible or metric difference",
    ),
}

EXACT = Tolerance(0.0, 0.0, "integer outputs are exact")


def same_bits_but_nan(expected, actual) -> bool:
    """Whether two arrays of one shape and dtype hold the same values bit for bit (-0 and +0 differ),
    where a NaN matches any NaN: its sign and payload are the CPU's or GPU's choice (x86 makes new
    NaNs negative, Arm and NVIDIA GPUs positive) and nothing else may differ."""
    import numpy as np

    if expected.dtype.kind != "f":
        return bool(np.array_equal(expected, actual))
    if np.array_equal(expected.view(np.uint8), actual.view(np.uint8)):
        return True
    numbers = ~np.isnan(expected)
    return bool(np.array_equal(expected, actual, equal_nan=True)
                and np.array_equal(np.signbit(expected[numbers]), np.signbit(actual[numbers])))


def tolerance(comparison: str, dtype, op: str = "*") -> Tolerance:
    """The tolerance for `comparison` ("same_precision", "float64_reference", "model", "detector",
    "cuda_twin", ...: the table's second keys) of `op`
    (a kernel stem such as "grid_sample", or "*") at `dtype` (a numpy or torch dtype, or its name)."""
    name = str(dtype).replace("torch.", "")
    if not name.startswith(("float", "bfloat")):
        return EXACT
    for key in ((op, comparison, name), ("*", comparison, name)):
        if key in TOLERANCES:
            return TOLERANCES[key]
    raise KeyError(f"no tolerance for ({op!r}, {comparison!r}, {name!r}); add one to opbridge/tolerances.py")
