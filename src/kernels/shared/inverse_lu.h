// Matrix inverse (getf2 + getrs in reference LAPACK's order, float32) as host-and-device pieces: a
// multiplier of L; the pivot choice as a combination of candidates, so that the CUDA kernel
// (kernels/cuda/inverse.cu) can search a column with a warp's lanes and still pick the row the CPU
// kernel's serial search picks (kernels/cpu/inverse.cc); and the solve of one column of the inverse.
#pragma once

#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// A multiplier of L, as getf2 scales the pivot's column: value * (1 / pivot) when the reciprocal
// cannot overflow (|pivot| >= FLT_MIN), else value / pivot; a zero pivot leaves the column as it
// is (all zeros, unless NaN).
OPBRIDGE_HD inline float InverseMultiplier(float value, float pivot, float reciprocal) {
  if (fabsf(pivot) >= 1.17549435e-38f) return value * reciprocal;  // FLT_MIN
  return pivot != 0.0f ? value / pivot : value;
}

// A candidate pivot of step k: row `row`, with the magnitude the search compares.
struct PivotCandidate {
  float magnitude;
  int32_t row;
};

// What the serial search does (start at row k, take a later row when |a[r][k]| > the best so far:
// the first row with the largest magnitude, a NaN below row k never taken, a NaN at row k kept)
// as candidates to combine in any order: a NaN below row k counts as -1 (below every magnitude);
// at row k it is handled by the caller (the pivot is then row k). The empty candidate is
// {-2, INT32_MAX}.
OPBRIDGE_HD inline PivotCandidate MakePivotCandidate(float value, int32_t row, int32_t k) {
  const float magnitude = fabsf(value);
  return PivotCandidate{row > k && magnitude != magnitude ? -1.0f : magnitude, row};
}
OPBRIDGE_HD inline PivotCandidate BetterPivot(const PivotCandidate& a, const PivotCandidate& b) {
  const bool take_b = b.magnitude > a.magnitude || (b.magnitude == a.magnitude && b.row < a.row);
  return take_b ? b : a;
}

// Column c of the inverse from the factors of P A = L U (`lu`: L's multipliers below the diagonal,
// U on and above it, rows `stride` apart; perm[i]: the row of A that is row i of P A): X = P I
// solved in place down column c of x (m x m, row-major), getrs's order for each element: for k
// ascending, x[i] -= l[i][k] * x[k] (i > k); then for i descending, x[i] /= u[i][i] and
// x[r] -= u[r][i] * x[i] (r < i). The CPU kernel runs the same operations a row at a time.
// lu, perm and x never overlap (__restrict__): without it the compiler must assume each store to x
// may change lu, and every update of a column waits for the previous one's store before loading
// its factor; with it the independent updates of a step overlap (the same operations in the same
// order on each element, so the same bits).
OPBRIDGE_HD inline void SolveInverseColumn(const float* __restrict__ lu, int stride, const int32_t* __restrict__ perm,
                                           int m, int c, float* __restrict__ x) {
  for (int i = 0; i < m; ++i) x[i * m + c] = perm[i] == c ? 1.0f : 0.0f;
  for (int k = 0; k < m; ++k) {
    const float xk = x[k * m + c];
    for (int i = k + 1; i < m; ++i) x[i * m + c] -= lu[i * stride + k] * xk;
  }
  for (int i = m - 1; i >= 0; --i) {
    x[i * m + c] /= lu[i * stride + i];
    const float xi = x[i * m + c];
    for (int r = 0; r < i; ++r) x[r * m + c] -= lu[r * stride + i] * xi;
  }
}

}  // namespace opbridge::shared
