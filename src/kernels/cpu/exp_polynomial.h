// exp(x) for x <= 0 in float32 as plain arithmetic that compilers vectorise: range reduction to
// x = n ln2 + r, |r| <= ln2 / 2, a degree-6 polynomial for e^r and the scale 2^n built from the
// bits of the rounding step. Every step is a separately rounded IEEE operation (-ffp-contract=off)
// or an exact one, so a loop over it gives the same bits at every vector width and CPU level,
// unlike std::exp (glibc's scalar code) or a vector library's exp. Within 0.98 ulp of exp at
// every float in [-87, 0] (checked exhaustively against double; Cephes' degree-7 expf polynomial
// is no closer, 0.97 ulp). Loops over it vectorise only when comparisons may be assumed not to
// trap (-fno-trapping-math, for the underflow select).
#pragma once

#include <cstdint>
#include <cstring>

namespace opbridge::cpu {

// e^x for x <= 0: 1 at 0, 0 below -87 (where e^x < 1.7e-38 would be subnormal or 0) and at
// -inf, NaN for NaN. Positive x is outside the domain (the result is wrong above about 88).
inline float ExpNonPositive(float x) {
  // Below -87 the steps below give garbage (n + 127 leaves the exponent field; -inf gives NaN),
  // replaced by 0 at the end.
  const bool underflow = x < -87.0f;
  // n = round(x / ln2): adding 1.5 * 2^23 rounds x / ln2 to an integer, which t holds in its low
  // mantissa bits; ln2 = C1 + C2 with C1 short enough that n * C1 is exact.
  constexpr float kRound = 12582912.0f;
  const float t = x * 1.44269504088896341f + kRound;
  const float n = t - kRound;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  // e^r = 1 + r + r^2 p(r), p of degree 4 fitted to (e^r - 1 - r) / r^2 over |r| <= ln2 / 2
  // (relative error weighted, iteratively reweighted least squares).
  float p = r * 1.3814496e-3f + 8.368718e-3f;
  p = p * r + 4.166839e-2f;
  p = p * r + 1.6666521e-1f;
  p = p * r + 4.9999994e-1f;
  const float e_r = (p * (r * r) + r) + 1.0f;
  // 2^n: (bits(t) + 127) << 23 puts n + 127 in the exponent field (t's own exponent shifts out).
  // For NaN the scale is garbage and e_r is NaN.
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits = (bits + 127u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return underflow ? 0.0f : e_r * scale;
}

}  // namespace opbridge::cpu
