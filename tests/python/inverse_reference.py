"""References for opbridge::Inverse, written from LAPACK's definitions and independent of the
kernel's code:

- `sgetf2_inverse`: reference LAPACK's sgetf2 (LU with partial pivoting, column by column) and
  strsm's substitutions on P I, in float32, one numpy operation per step of the reference order.
  numpy rounds every product and every difference separately (no fused multiply-adds), so this
  gives the bits a float32 implementation of that order gives on any CPU; opbridge's kernel
  promises exactly those bits, including whether a pivot comes out exactly zero.
- `exact_lu`: the same factorization in exact rational arithmetic (`fractions.Fraction`), and
  `elimination_is_exact`, which says whether every float32 LU with partial pivoting (any order of
  the updates: unblocked, blocked, recursive, with or without fused multiply-adds, as MKL or
  OpenBLAS choose per CPU) must compute that exact factorization. Only for such matrices does
  PyTorch's verdict "singular" (LAPACK's info) not depend on the CPU it runs on.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

f32 = np.float32
FLT_MIN = np.finfo(np.float32).tiny


def _sgetf2_inverse_one(a: np.ndarray) -> tuple[np.ndarray, int]:
    m = a.shape[0]
    u = a.astype(f32)  # becomes L (below the diagonal) and U
    perm = list(range(m))
    info = 0
    with np.errstate(all="ignore"):  # singular and non-finite matrices divide by zero
        for k in range(m):
            # isamax: the first row with the largest |a[r][k]| (a NaN never compares larger).
            pivot_row, best = k, abs(u[k, k])
            for r in range(k + 1, m):
                if abs(u[r, k]) > best:
                    pivot_row, best = r, abs(u[r, k])
            if pivot_row != k:
                u[[k, pivot_row]] = u[[pivot_row, k]]
                perm[k], perm[pivot_row] = perm[pivot_row], perm[k]
            pivot = u[k, k]
            if pivot == 0 and info == 0:
                info = k + 1
            # sgetf2 scales the column by 1 / pivot when that cannot overflow, else divides by it;
            # a zero pivot leaves the column as it is.
            reciprocal = f32(1) / pivot
            for i in range(k + 1, m):
                if abs(pivot) >= FLT_MIN:
                    u[i, k] = u[i, k] * reciprocal
                elif pivot != 0:
                    u[i, k] = u[i, k] / pivot
                u[i, k + 1:] -= u[i, k] * u[k, k + 1:]  # product rounded, then the difference
        x = np.zeros((m, m), f32)
        x[np.arange(m), perm] = 1  # P I
        for k in range(m):  # strsm, unit lower: x[i] -= l[i][k] x[k], k ascending
            for i in range(k + 1, m):
                x[i] -= u[i, k] * x[k]
        for i in range(m - 1, -1, -1):  # strsm, upper: x[i] /= u[i][i], then x[r] -= u[r][i] x[i]
            x[i] /= u[i, i]
            for r in range(i):
                x[r] -= u[r, i] * x[i]
    return x, info


def sgetf2_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverse and LAPACK's info of every matrix of `a` [..., M, M], float32, in reference
    LAPACK's order (see the module's docstring)."""
    a = np.asarray(a, f32)
    m = a.shape[-1]
    flat = a.reshape(-1, m, m)
    inverses = np.empty_like(flat)
    info = np.zeros(len(flat), np.int32)
    for b in range(len(flat)):
        inverses[b], info[b] = _sgetf2_inverse_one(flat[b])
    return inverses.reshape(a.shape), info.reshape(a.shape[:-2])


def exact_lu(matrix) -> tuple[list, list, int, bool]:
    """LU with partial pivoting in exact rational arithmetic on the entries of `matrix` (as float32
    values). Returns the Schur complements' every entry, multiplier and product (the values any
    float32 elimination must represent exactly to reproduce it), the largest sum of magnitudes that
    any update of one entry adds up (bounds every partial sum, whatever its order), LAPACK's info,
    and whether every pivot choice was unambiguous (any other row of the column with the pivot's
    magnitude equals the pivot row, so choosing it changes nothing)."""
    a = [[Fraction(float(f32(v))) for v in row] for row in np.asarray(matrix)]
    m = len(a)
    values = [v for row in a for v in row]
    # magnitude[i][c]: |a[i][c]| plus the magnitudes of every product subtracted from it so far.
    magnitude = [[abs(v) for v in row] for row in a]
    info, unambiguous = 0, True
    for k in range(m):
        column = [abs(a[r][k]) for r in range(k, m)]
        best = max(column)
        pivot_row = k + column.index(best)
        # Rows that tie with the pivot row are a different choice unless they equal it.
        if best != 0 and any(column[r - k] == best and a[r] != a[pivot_row] for r in range(k, m)):
            unambiguous = False
        a[k], a[pivot_row] = a[pivot_row], a[k]
        magnitude[k], magnitude[pivot_row] = magnitude[pivot_row], magnitude[k]
        pivot = a[k][k]
        if pivot == 0:
            info = info or k + 1
            continue
        values.append(1 / pivot)
        for i in range(k + 1, m):
            multiplier = a[i][k] / pivot
            values.append(multiplier)
            for c in range(k + 1, m):
                product = multiplier * a[k][c]
                values.append(product)
                a[i][c] -= product
                values.append(a[i][c])
                magnitude[i][c] += abs(product)
    largest_sum = max((v for row in magnitude for v in row), default=Fraction(0))
    return values, largest_sum, info, unambiguous


def elimination_is_exact(matrix) -> bool:
    """True when every float32 LU with partial pivoting of `matrix`, whatever the order of its
    updates, computes the exact factorization: the pivot choices are unambiguous, every pivot is
    zero or a power of two (so a multiplier is exact whether it is computed as a * (1 / pivot) or
    a / pivot), and every value involved is a multiple of one power of two 2^-e with every partial
    sum below 2^24 * 2^-e (so no sum or product, fused or not, in any order, rounds)."""
    values, largest_sum, _, unambiguous = exact_lu(matrix)
    if not unambiguous:
        return False
    denominators = [v.denominator for v in values]
    if any(d & (d - 1) for d in denominators):  # not a power of two: not a finite binary fraction
        return False
    scale = max(denominators, default=1)
    return largest_sum * scale < 2 ** 24


def exact_info(matrix) -> int:
    """LAPACK's info in exact arithmetic: 0, or the step (from 1) of the first zero pivot."""
    return exact_lu(matrix)[2]
