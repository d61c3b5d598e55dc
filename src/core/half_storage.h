// Half-precision storage (float16, bfloat16) with float32 arithmetic, as host-and-device functions:
// a kernel reads each stored element as the float it is (exactly) and rounds each result once to the
// storage type when it writes it, so that its outputs are the float32 kernel's on the half values,
// rounded once. The CPU kernels and the CUDA kernels convert with these same functions, integer
// operations and float additions that are exact or round to nearest (no dependence on flush-to-zero
// or on the F16C and CUDA intrinsics, whose NaN results differ), so both give the same bits. They
// select with masks rather than branches, so that a loop of conversions vectorizes. Tested against
// the hardware's conversion (x86's F16C, aarch64's __fp16) over every float32 and against a
// reference that picks the nearest half value by comparison (tests/cpp/half_storage_test.cc).
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

// The float16 value as a float32: exact (every float16 is a float32), NaN payloads kept. Without
// branches, as kernels read it per element: a normal number, an infinity or a NaN moves its exponent
// and fraction into place and rebiases the exponent by integer addition (+112, or +224 for the
// all-ones exponent); a subnormal f * 2^-24 is (0.5 + f * 2^-24) - 0.5 in float arithmetic, exact
// and of normal operands and result (so neither rounding mode nor flush-to-zero can change it).
OPBRIDGE_HD inline float ToFloat(Float16 h) {
  const uint32_t w = static_cast<uint32_t>(h.bits) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;  // exponent in bits 27-31, fraction in 17-26; the sign shifted out
  // (Selections as masks of all ones or zero, not conditionals or variable shifts: loops of
  // conversions vectorize, with SSE's integer operations too.)
  const uint32_t special = 0u - static_cast<uint32_t>(two_w >= 0xF8000000u);  // exponent 31: inf, NaN
  const uint32_t normal = (two_w >> 4) + (112u << 23) + (special & (112u << 23));
  // The magnitude of a subnormal (or zero: 0.5 - 0.5, whose sign the rounding mode would pick).
  const uint32_t subnormal = FloatBits(FloatFromBits((two_w >> 17) | (126u << 23)) - 0.5f) & 0x7FFFFFFFu;
  const uint32_t is_subnormal = 0u - static_cast<uint32_t>(two_w < (1u << 27));
  return FloatFromBits(sign | (subnormal & is_subnormal) | (normal & ~is_subnormal));
}

// The float16 nearest to v (ties to even), as torch's and numpy's conversions: magnitudes from
// 65,520 (halfway past the largest float16, 65,504) become infinity, those up to 2^-25 (half the
// smallest subnormal) zero, keeping the sign; NaN becomes 0x7E00 with v's sign (torch's c10::Half;
// the twins' comparison leaves a NaN's payload open).
OPBRIDGE_HD inline Float16 ToFloat16(float v) {
  const uint32_t bits = FloatBits(v);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  // From 2^-14 (a normal float16): rebias the exponent (127 - 15 = 112), then round away the 13 low
  // fraction bits to even; a carry out of the fraction steps the exponent, as it should.
  const uint32_t normal = (magnitude - 0x38000000u + 0xFFFu + ((magnitude >> 13) & 1u)) >> 13;
  // Below 2^-14 (a subnormal float16 or zero): |v| + 0.5 rounds |v| to a multiple of 2^-24, 0.5's
  // ulp, ties to even (2^-25 itself to 0), and the sum's low bits are the float16's; |v| just below
  // 2^-14 rounds up to 0x400, the smallest normal. (That addition rounds in the FPU's mode: to nearest,
  // the default every runtime keeps; a CUDA add is always so. A float32 subnormal |v| that a
  // flush-to-zero mode reads as 0 gives 0, as it should.)
  const uint32_t small = FloatBits(FloatFromBits(magnitude) + 0.5f) - 0x3F000000u;
  // (Selections as masks, not conditionals: loops of conversions vectorize.)
  const uint32_t is_small = 0u - static_cast<uint32_t>(magnitude < 0x38800000u);
  const uint32_t is_inf = 0u - static_cast<uint32_t>(magnitude >= 0x477FF000u);  // >= 65,520: inf
  const uint32_t is_nan = 0u - static_cast<uint32_t>(magnitude > 0x7F800000u);
  uint32_t result = (small & is_small) | (normal & ~is_small);
  result = (0x7C00u & is_inf) | (result & ~is_inf);
  result = (0x7E00u & is_nan) | (result & ~is_nan);
  return {static_cast<uint16_t>(sign | result)};
}

// The bfloat16 value as a float32: exact.
OPBRIDGE_HD inline float ToFloat(BFloat16 b) { return FloatFromBits(static_cast<uint32_t>(b.bits) << 16); }

// The bfloat16 nearest to v (ties to even; overflow to infinity), as torch's c10::BFloat16: NaN
// becomes 0x7FC0.
OPBRIDGE_HD inline BFloat16 ToBFloat16(float v) {
  const uint32_t bits = FloatBits(v);
  const uint32_t odd = (bits >> 16) & 1u;
  const uint32_t rounded = (bits + 0x7FFFu + odd) >> 16;
  // (A selection as a mask, not a branch, as ToFloat16's: the branch made a GPU kernel spill.)
  const uint32_t is_nan = 0u - static_cast<uint32_t>((bits & 0x7FFFFFFFu) > 0x7F800000u);
  return {static_cast<uint16_t>((0x7FC0u & is_nan) | (rounded & ~is_nan))};
}

// A kernel's reads and writes in its storage type T (float, Float16 or BFloat16): the float it
// computes with, and the element it stores.
OPBRIDGE_HD inline float Load(const float* p) { return *p; }
OPBRIDGE_HD inline float Load(const Float16* p) { return ToFloat(*p); }
OPBRIDGE_HD inline float Load(const BFloat16* p) { return ToFloat(*p); }
OPBRIDGE_HD inline void Store(float* p, float v) { *p = v; }
OPBRIDGE_HD inline void Store(Float16* p, float v) { *p = ToFloat16(v); }
OPBRIDGE_HD inline void Store(BFloat16* p, float v) { *p = ToBFloat16(v); }

// Elements [0, count) of src as floats into dst: the conversion as a loop over a contiguous run,
// which vectorizes (for float, a copy), where a kernel converts a row, a plane or a block of entries
// before reading it many times.
template <class T>
OPBRIDGE_HD inline void LoadRun(const T* src, int64_t count, float* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = Load(src + i);
}

// LoadRun's inverse: floats [0, count) of src stored as T into dst, each rounded once, where a
// kernel computes a run of results in float32 before storing them.
template <class T>
OPBRIDGE_HD inline void StoreRun(const float* src, int64_t count, T* dst) {
  for (int64_t i = 0; i < count; ++i) Store(dst + i, src[i]);
}

}  // namespace opbridge::shared
