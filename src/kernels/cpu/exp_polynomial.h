// exp(x) for x <= 0 on 16 floats at a time, as plain arithmetic on GCC vector types: range
// reduction to x = n ln2 + r, |r| <= ln2 / 2, a degree-7 polynomial for e^r (Cephes' expf
// coefficients) and the scale 2^n built from its bits. Every step is a separately rounded IEEE
// operation on each lane (-ffp-contract=off), which the compiler lowers to 1 AVX-512, 2 AVX2 or
// 4 SSE instructions: the same bits at every CPU level, unlike std::exp (glibc's scalar code) or
// a vector library's exp. Within 2 ulp of exp over [-87, 0] (tested against double).
#pragma once

#include <cstdint>

namespace opbridge::cpu {

typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

// e^x for x <= 0, lane by lane: 1 at 0, 0 below -87 (where e^x < 1.7e-38 would be subnormal or
// 0) and at -inf, NaN for NaN. Positive x is outside the domain (wrong above about 88).
__attribute__((always_inline)) inline Floats16 ExpNonPositive(Floats16 x) {
  const Floats16 zero = {};
  const Floats16 lowest = zero - 87.0f;
  const Ints16 underflow = x < lowest;
  x = underflow ? lowest : x;  // NaN stays NaN
  // n = round(x / ln2) (adding and subtracting 1.5 * 2^23 rounds to an integer), and
  // ln2 = C1 + C2 with C1 short enough that n * C1 is exact.
  constexpr float kRound = 12582912.0f;
  Floats16 n = (x * 1.44269504088896341f + kRound) - kRound;
  const Floats16 r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  Floats16 p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const Floats16 e_r = (p * (r * r) + r) + 1.0f;
  n = n == n ? n : zero;  // NaN: any scale (e_r is NaN), and no NaN to int conversion
  const Ints16 bits = (__builtin_convertvector(n, Ints16) + 127) << 23;  // 2^n, n in [-126, 0]
  return underflow ? zero : e_r * (Floats16)bits;  // a vector cast keeps the bits
}

}  // namespace opbridge::cpu
