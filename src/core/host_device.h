// Host-and-device code: per-element math that the CPU kernels and the CUDA kernels share, so that
// both compute it with the same float operations in the same order, and the CPU tests exercise
// the code the GPU runs. Framework-free.
//
// A function marked OPBRIDGE_HD compiles as a host function under g++ and as a host and device
// function under nvcc. Such functions call only what both sides have: the arithmetic operators,
// the C math functions below (floorf, ceilf, ...: IEEE-exact on both, so results are bit-identical
// between the host and the device), and the helpers here. The library is compiled without
// contraction into fused multiply-adds on either side (g++ -ffp-contract=off, nvcc -fmad=false),
// so a * b + c is two roundings everywhere, unless written as an explicit fmaf.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define OPBRIDGE_HD __host__ __device__
#else
#define OPBRIDGE_HD
#endif

namespace opbridge::shared {

OPBRIDGE_HD inline bool IsNan(float v) { return v != v; }
OPBRIDGE_HD inline bool IsFinite(float v) { return v - v == 0.0f; }  // false for NaN and +-inf
// std::min and std::max's argument order (which decides what a NaN argument gives).
template <class T>
OPBRIDGE_HD inline T Min(T a, T b) { return b < a ? b : a; }
template <class T>
OPBRIDGE_HD inline T Max(T a, T b) { return a < b ? b : a; }
template <class T>
OPBRIDGE_HD inline T Clamp(T v, T low, T high) { return v < low ? low : (high < v ? high : v); }

// A float's bits, and the float of given bits.
OPBRIDGE_HD inline uint32_t FloatBits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
#endif
}
OPBRIDGE_HD inline float FloatFromBits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

}  // namespace opbridge::shared
