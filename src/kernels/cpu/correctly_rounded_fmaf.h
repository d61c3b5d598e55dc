// a * b + c rounded once, to float, in plain double arithmetic: what a hardware FMA and glibc's
// fmaf give. mingw-w64's fmaf (libmingwex) rounds the product first, and differs from them on 27%
// of random triples; the Windows build replaces it with this one (mingw_fmaf.cc).
//
// How: the product of two floats is exact in double (48 of 53 bits). Its sum with c, rounded to
// double and then to float, would round twice; rounded to odd instead (the double neighbour of the
// exact sum whose last bit is 1, unless the sum is exact), the second rounding to float gives the
// correctly rounded result, since double carries more than float's 24 + 2 bits (Boldo and
// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
// IEEE Trans. Computers 2008). The rounding error of the double sum comes exactly from Knuth's
// TwoSum. Needs -ffp-contract=off (CMakeLists.txt): a fused product + c would be no double sum.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace opbridge::cpu {

inline float CorrectlyRoundedFmaf(float a, float b, float c) {
  const double product = static_cast<double>(a) * static_cast<double>(b);  // exact
  const double addend = static_cast<double>(c);
  const double sum = product + addend;
  if (!std::isfinite(sum)) return static_cast<float>(sum);  // an infinity or NaN in, as fmaf gives
  const double addend_part = sum - product;  // TwoSum: sum + error == product + addend exactly
  const double error = (product - (sum - addend_part)) + (addend - addend_part);
  if (error == 0.0) return static_cast<float>(sum);
  uint64_t bits;
  std::memcpy(&bits, &sum, sizeof bits);
  if ((bits & 1) == 0) {
    // The odd neighbour toward the exact sum (sum is not 0: a sum rounds to 0 only when exact).
    bits += (sum > 0.0) == (error > 0.0) ? 1 : static_cast<uint64_t>(-1);
  }
  double odd;
  std::memcpy(&odd, &bits, sizeof odd);
  return static_cast<float>(odd);
}

}  // namespace opbridge::cpu
