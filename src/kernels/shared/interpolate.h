// PyTorch's F.interpolate index and weight arithmetic, float32, for kernels that must reproduce
// torchvision's resizes bit for bit (PasteMasks, HeatmapsToKeypoints).
//
// Scope: mode "bilinear" or "bicubic", align_corners=False, antialias=False, the output size
// given (no scale_factor), as PyTorch 2.14's CPU kernels compute it: the helpers of
// aten/src/ATen/native/UpSample.h (compute_scales_value, area_pixel_compute_source_index,
// guard_index_and_lambda, compute_source_index_and_lambda, get_cubic_upsample_coefficients)
// inlined into aten/src/ATen/native/cpu/UpSampleKernel.cpp. Everything is float (PyTorch's
// opmath_t for float32); only indices are int64.
//
// Fused multiply-adds. PyTorch compiles UpSampleKernel.cpp once per CPU capability. Its AVX2 and
// AVX-512 builds are compiled with -mfma under GCC's default -ffp-contract=fast, so GCC fuses
// some `a * b + c` expressions of that scalar code into one rounding; those builds are what
// PyTorch runs on every x86-64 CPU with AVX2 (the two give identical results). We follow them:
// each fusion they make is written here, and in the kernels' tap-combining code, as an explicit
// fmaf, and every other step is rounded on its own. opbridge is compiled with
// -ffp-contract=off, so the compiler adds no fusions of its own and the results are the same on
// every CPU (fmaf is exactly rounded whether or not the CPU has an FMA instruction). On a CPU
// without AVX2, or under ATEN_CPU_CAPABILITY=default, PyTorch runs its unfused build instead,
// whose results differ from these in the last bits (up to ~1e-6 relative for bilinear, more for
// bicubic). Where each fusion sits was read from the disassembly of PyTorch 2.14.1's
// libtorch_cpu.so and checked bit for bit against F.interpolate.
//
// Host-and-device: the CUDA kernels of PasteMasks and HeatmapsToKeypoints use these too (fmaf is
// exactly rounded on both), so they give the CPU kernels' bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// compute_scales_value<float> without a scale: float(in_size) / out_size, one float division
// (out_size converted to float).
OPBRIDGE_HD inline float InterpolateScale(int64_t in_size, int64_t out_size) {
  return static_cast<float>(in_size) / static_cast<float>(out_size);
}

// area_pixel_compute_source_index<float>(scale, dst, align_corners=false, cubic):
// scale * (dst + 0.5f) - 0.5f, where the FMA builds fuse the multiply and the subtraction (and
// dst + 0.5f converts dst to float first). Linear clamps negative coordinates to 0; cubic does
// not.
OPBRIDGE_HD inline float InterpolateSourceCoordinate(float scale, int64_t dst, bool cubic) {
  const float real = fmaf(scale, static_cast<float>(dst) + 0.5f, -0.5f);
  return (!cubic && real < 0.0f) ? 0.0f : real;
}

// guard_index_and_lambda: the source index, floor(real) but at most in_size - 1, and the
// fraction past it, clamped to [0, 1].
struct SourceIndexLambda {
  int64_t index;
  float lambda;
};

OPBRIDGE_HD inline SourceIndexLambda GuardIndexAndLambda(float real, int64_t in_size) {
  SourceIndexLambda r;
  r.index = Min(static_cast<int64_t>(floorf(real)), in_size - 1);
  r.lambda = Min(Max(real - static_cast<float>(r.index), 0.0f), 1.0f);
  return r;
}

// The two taps of linear interpolation for output index dst: compute_source_index_and_lambda.
// i1 is i0 + 1 except at the last source index; l0 = 1 - l1.
struct LinearTap {
  int64_t i0, i1;
  float l0, l1;
};

OPBRIDGE_HD inline LinearTap LinearSourceTap(float scale, int64_t dst, int64_t in_size, int64_t out_size) {
  // PyTorch's shortcut when the sizes are equal ("scale_factor = 1, simply copy"). The formula
  // would give the same weights, but also a second tap of weight 0 whose value could be
  // infinite or NaN.
  if (out_size == in_size) return {dst, dst, 1.0f, 0.0f};
  const SourceIndexLambda s = GuardIndexAndLambda(InterpolateSourceCoordinate(scale, dst, false), in_size);
  LinearTap t;
  t.i0 = s.index;
  t.i1 = s.index + (s.index < in_size - 1 ? 1 : 0);
  t.l1 = s.lambda;
  t.l0 = 1.0f - s.lambda;
  return t;
}

// Keys' cubic convolution with A = -0.75 (get_cubic_upsample_coefficients), in the FMA builds'
// order: the inner multiply-adds fused, the last product and the final +1 / +3 rounded on their
// own (GCC packed the four coefficients and added [3, 1, 1, 3] with one vector add).
//   cubic_convolution1(x) = ((A + 2) * x - (A + 3)) * x * x + 1,  for |x| <= 1
//   cubic_convolution2(x) = ((A * x - 5A) * x + 8A) * x - 4A,     for 1 < |x| < 2
OPBRIDGE_HD inline float CubicConvolution1(float x) {
  const float p = fmaf(1.25f, x, -2.25f);
  const float px = p * x;
  return px * x + 1.0f;
}

OPBRIDGE_HD inline float CubicConvolution2(float x) {
  const float p = fmaf(fmaf(-0.75f, x, 3.75f), x, -6.0f);
  return p * x + 3.0f;
}

// The four taps of bicubic interpolation for output index dst (HelperInterpCubic's
// compute_indices_weights): source rows or columns floor(real) - 1 .. floor(real) + 2, each
// clamped into [0, in_size - 1] (the border is read again; the weights are not merged).
struct CubicTap {
  int64_t index[4];
  float weight[4];
};

OPBRIDGE_HD inline CubicTap CubicSourceTap(float scale, int64_t dst, int64_t in_size) {
  const SourceIndexLambda s = GuardIndexAndLambda(InterpolateSourceCoordinate(scale, dst, true), in_size);
  const float t = s.lambda;
  // PyTorch writes t + 1.0, 1.0 - t and x2 + 1.0 with double literals and stores each to float:
  // the same values as these float operations (a double result rounded to float is the correctly
  // rounded float result for a sum or difference of two floats).
  const float u = 1.0f - t;  // x2 in PyTorch
  CubicTap c;
  c.weight[0] = CubicConvolution2(t + 1.0f);
  c.weight[1] = CubicConvolution1(t);
  c.weight[2] = CubicConvolution1(u);
  c.weight[3] = CubicConvolution2(u + 1.0f);
  for (int j = 0; j < 4; ++j) c.index[j] = Clamp<int64_t>(s.index - 1 + j, 0, in_size - 1);
  return c;
}

// The four-tap sum of PyTorch's non-separable bicubic kernel (one level of
// InterpolateNonSeparable<.., 4>): `out = v0*w0; out += v1*w1; out += v2*w2; out += v3*w3`,
// which the FMA builds compile as fma(v3, w3, fma(v2, w2, fma(v0, w0, v1 * w1))).
OPBRIDGE_HD inline float CubicCombine(float v0, float v1, float v2, float v3, float w0, float w1, float w2, float w3) {
  float out = fmaf(v0, w0, v1 * w1);
  out = fmaf(v2, w2, out);
  return fmaf(v3, w3, out);
}

// Bilinear interpolation of one output pixel from its four source values (v<row><column>), in the
// two orders of PyTorch's bilinear kernels (FMA builds), with row weights lh0, lh1 and column
// weights l0, l1:
// the generic kernel (output h + w > 128) interpolates along each source row, then between them,
// each `a * b + c * d` as fma(a, b, c * d);
OPBRIDGE_HD inline float BilinearGeneric(float v00, float v01, float v10, float v11, float lh0, float lh1, float l0,
                                         float l1) {
  const float t0 = fmaf(v00, l0, v01 * l1);
  const float t1 = fmaf(v10, l0, v11 * l1);
  return fmaf(t0, lh0, t1 * lh1);
}

// the channels-last kernel (h + w <= 128; with one channel its scalar tail) combines the weights
// first, then v00*w00 + v01*w01 + v10*w10 + v11*w11 as fma(v11, w11, fma(v10, w10, fma(v00, w00,
// v01*w01))).
OPBRIDGE_HD inline float BilinearChannelsLast(float v00, float v01, float v10, float v11, float lh0, float lh1,
                                              float l0, float l1) {
  const float w00 = lh0 * l0, w01 = lh0 * l1, w10 = lh1 * l0, w11 = lh1 * l1;
  float v = fmaf(v00, w00, v01 * w01);
  v = fmaf(v10, w10, v);
  return fmaf(v11, w11, v);
}

// PyTorch's choice between them for a one-channel float image of output size out_h x out_w.
OPBRIDGE_HD inline bool BilinearUsesChannelsLast(int64_t out_h, int64_t out_w) {
  return out_h <= 128 && out_w <= 128 && out_h + out_w <= 128;
}

}  // namespace opbridge::shared
