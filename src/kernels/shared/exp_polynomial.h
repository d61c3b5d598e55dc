// exp(x) for x <= 0 in float32 as plain arithmetic that compilers vectorise: range reduction to
// x = n ln2 + r, |r| <= ln2 / 2, a degree-6 polynomial for e^r and the scale 2^n built from the
// bits of the rounding step. Two forms of the same steps:
// - ExpNonPositive: every step a separately rounded IEEE operation (-ffp-contract=off) or an
//   exact one, for CPUs without FMA (x86-64-v2). Within 0.98 ulp of exp at every float in [-87, 0]
//   (checked exhaustively against double; Cephes' degree-7 expf polynomial is no closer, 0.97).
// - ExpNonPositiveFused: the multiply-adds fused (fmaf, one instruction at x86-64-v3 and v4 and on
//   the GPU), about 30% fewer operations; within 1.01 ulp, and its bits differ from the unfused
//   form's in about 0.1% of inputs. The CUDA kernels use this form, so their bits are those of the
//   CPU kernels on CPUs with FMA.
// Each gives the same bits at every vector width, unlike std::exp (glibc's scalar code) or a
// vector library's exp. Loops over them vectorise only when comparisons may be assumed not to
// trap (-fno-trapping-math, for the underflow select).
#pragma once

#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// Shared by both forms: 2^n times e^r, where t = x / ln2 + 1.5 * 2^23 holds n in its low
// mantissa bits; 0 when x underflows (below -87 the steps give garbage: n + 127 leaves the exponent
// field, -inf gives NaN). For NaN the scale is garbage and e_r is NaN.
OPBRIDGE_HD inline float ScaleByPowerOfTwo(float e_r, float t, bool underflow) {
  // (bits(t) + 127) << 23 puts n + 127 in the exponent field (t's own exponent shifts out).
  const float scale = FloatFromBits((FloatBits(t) + 127u) << 23);
  return underflow ? 0.0f : e_r * scale;
}

// Adding kRound rounds x / ln2 to an integer n; ln2 = kLn2High + kLn2Low with kLn2High short
// enough that n * kLn2High is exact. The polynomial: e^r = 1 + r + r^2 p(r), p of degree 4 fitted
// to (e^r - 1 - r) / r^2 over |r| <= ln2 / 2 (relative error weighted, iteratively reweighted
// least squares).
constexpr float kRound = 12582912.0f, kLog2e = 1.44269504088896341f;
constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
constexpr float kP4 = 1.3814496e-3f, kP3 = 8.368718e-3f, kP2 = 4.166839e-2f, kP1 = 1.6666521e-1f,
                kP0 = 4.9999994e-1f;

// e^x for x <= 0: 1 at 0, 0 below -87 (where e^x < 1.7e-38 would be subnormal or 0) and at
// -inf, NaN for NaN. Positive x is outside the domain (the result is wrong above about 88).
OPBRIDGE_HD inline float ExpNonPositive(float x) {
  const bool underflow = x < -87.0f;
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const float r = (x - n * kLn2High) - n * kLn2Low;
  float p = r * kP4 + kP3;
  p = p * r + kP2;
  p = p * r + kP1;
  p = p * r + kP0;
  const float e_r = (p * (r * r) + r) + 1.0f;
  return ScaleByPowerOfTwo(e_r, t, underflow);
}

// The same with fused multiply-adds: for the GPU and for code compiled with FMA (x86-64-v3 and
// up), where fmaf is one instruction; on other CPUs it is a slow library call.
OPBRIDGE_HD inline float ExpNonPositiveFused(float x) {
  const bool underflow = x < -87.0f;
  const float t = fmaf(x, kLog2e, kRound);
  const float n = t - kRound;
  const float r = fmaf(n, -kLn2Low, fmaf(n, -kLn2High, x));
  float p = fmaf(r, kP4, kP3);
  p = fmaf(p, r, kP2);
  p = fmaf(p, r, kP1);
  p = fmaf(p, r, kP0);
  const float e_r = fmaf(p, r * r, r) + 1.0f;
  return ScaleByPowerOfTwo(e_r, t, underflow);
}

}  // namespace opbridge::shared
