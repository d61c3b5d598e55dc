// Half-precision storage (float16, bfloat16) with float32 arithmetic, as host-and-device functions:
// a kernel reads each stored element as the float it is (exactly) and rounds each result once to the
// storage type when it writes it, so that its outputs are the float32 kernel's on the half values,
// rounded once. The CPU kernels and the CUDA kernels convert with these same functions, integer
// operations only (no dependence on the FPU's rounding mode, flush-to-zero or the F16C and CUDA
// intrinsics, whose NaN results differ), so both give the same bits. Tested against the hardware's
// conversion (x86's F16C, aarch64's __fp16) over every float32 and against a reference that picks
// the nearest half value by comparison (tests/cpp/half_storage_test.cc).
#pragma once

#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// IEEE 754 binary16 (ONNX float16, torch.float16): 1 sign, 5 exponent, 10 fraction bits.
struct Float16 {
  uint16_t bits;
};
// bfloat16 (ONNX bfloat16, torch.bfloat16): float32's top 16 bits, 8 exponent and 7 fraction bits.
struct BFloat16 {
  uint16_t bits;
};

// The float16 value as a float32: exact (every float16 is a float32), NaN payloads kept.
OPBRIDGE_HD inline float ToFloat(Float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1Fu, fraction = h.bits & 0x3FFu;
  if (exponent == 0x1Fu) return FloatFromBits(sign | 0x7F800000u | (fraction << 13));  // inf, NaN
  if (exponent == 0) {
    if (fraction == 0) return FloatFromBits(sign);  // +-0
    // A subnormal, fraction * 2^-24: normalized, its leading bit moved to bit 10.
    exponent = 1;
    while ((fraction & 0x400u) == 0) {
      fraction <<= 1;
      --exponent;
    }
    fraction &= 0x3FFu;
  }
  return FloatFromBits(sign | ((exponent + 112u) << 23) | (fraction << 13));
}

// The float16 nearest to v (ties to even), as torch's and numpy's conversions: magnitudes from
// 65,520 (halfway past the largest float16, 65,504) become infinity, those up to 2^-25 (half the
// smallest subnormal) zero, keeping the sign; NaN becomes 0x7E00 with v's sign (torch's c10::Half;
// the twins' comparison leaves a NaN's payload open).
OPBRIDGE_HD inline Float16 ToFloat16(float v) {
  const uint32_t bits = FloatBits(v);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return {static_cast<uint16_t>(sign | 0x7E00u)};  // NaN
  if (magnitude >= 0x477FF000u) return {static_cast<uint16_t>(sign | 0x7C00u)};  // >= 65,520: inf
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal float16
    // Rebias the exponent (127 - 15 = 112), then round away the 13 low fraction bits to even; a
    // carry out of the fraction steps the exponent, as it should.
    const uint32_t odd = (magnitude >> 13) & 1u;
    return {static_cast<uint16_t>(sign | ((magnitude - 0x38000000u + 0xFFFu + odd) >> 13))};
  }
  if (magnitude <= 0x33000000u) return {sign};  // <= 2^-25: zero (2^-25 itself ties to even 0)
  // A subnormal float16: v / 2^-24 = m * 2^(e - 126) for the float's exponent field e (102..112)
  // and its significand m with the hidden bit, rounded to an integer, ties to even.
  const uint32_t e = magnitude >> 23, m = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14 .. 24
  uint32_t q = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (q & 1u) != 0)) ++q;  // 0x400 is the smallest normal: right
  return {static_cast<uint16_t>(sign | q)};
}

// The bfloat16 value as a float32: exact.
OPBRIDGE_HD inline float ToFloat(BFloat16 b) { return FloatFromBits(static_cast<uint32_t>(b.bits) << 16); }

// The bfloat16 nearest to v (ties to even; overflow to infinity), as torch's c10::BFloat16: NaN
// becomes 0x7FC0.
OPBRIDGE_HD inline BFloat16 ToBFloat16(float v) {
  const uint32_t bits = FloatBits(v);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return {0x7FC0u};
  const uint32_t odd = (bits >> 16) & 1u;
  return {static_cast<uint16_t>((bits + 0x7FFFu + odd) >> 16)};
}

// A kernel's reads and writes in its storage type T (float, Float16 or BFloat16): the float it
// computes with, and the element it stores.
OPBRIDGE_HD inline float Load(const float* p) { return *p; }
OPBRIDGE_HD inline float Load(const Float16* p) { return ToFloat(*p); }
OPBRIDGE_HD inline float Load(const BFloat16* p) { return ToFloat(*p); }
OPBRIDGE_HD inline void Store(float* p, float v) { *p = v; }
OPBRIDGE_HD inline void Store(Float16* p, float v) { *p = ToFloat16(v); }
OPBRIDGE_HD inline void Store(BFloat16* p, float v) { *p = ToBFloat16(v); }

}  // namespace opbridge::shared
