// Bicubic interpolation's per-axis taps and sums as host-and-device functions (PyTorch's
// upsample_bicubic2d with a scale factor, aten's UpSample.h): the CPU kernel
// (kernels/cpu/bicubic_interpolate.cc) makes every output row's and column's taps with them and
// sums in two passes, the CUDA kernel (kernels/cuda/bicubic_interpolate.cu) makes an output's taps
// and sums per element; the same float32 operations in the same order, so the same bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"
#include "kernels/shared/cubic_convolution.h"

namespace opbridge::shared {

// area_pixel_compute_scale: an axis' source scale, (in - 1) / (out - 1) with align_corners (0 when
// out = 1), else 1 / scale_factor (the factor given, not in / out) rounded from double, as
// F.interpolate passes it. On the host: the CUDA kernel takes it as an argument.
inline float CubicAxisScale(int64_t in, int64_t out, float scale_factor, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  return static_cast<float>(1.0 / static_cast<double>(scale_factor));
}

// Output o's four taps along an axis of `in` inputs: their indices (floor - 1 ... floor + 2 of the
// source index, clamped to the axis) and weights.
template <class Index>
struct CubicTaps {
  Index index[4];
  float weight[4];
};

template <class Index>
OPBRIDGE_HD inline CubicTaps<Index> MakeCubicTaps(Index o, Index in, float scale, bool align_corners) {
  const float real = align_corners ? scale * static_cast<float>(o) : scale * (static_cast<float>(o) + 0.5f) - 0.5f;
  // guard_index_and_lambda
  const Index floor_index = static_cast<Index>(floorf(real));
  const Index first = floor_index < in - 1 ? floor_index : in - 1;
  const float t = Min(Max(real - static_cast<float>(first), 0.f), 1.f);
  const float a = -0.75f;  // upsample_bicubic2d's A: its weights' arguments are t + 1, t, 1 - t, (1 - t) + 1
  CubicTaps<Index> taps;
  taps.weight[0] = CubicConvolution2(t + 1.f, a);
  taps.weight[1] = CubicConvolution1(t, a);
  taps.weight[2] = CubicConvolution1(1.f - t, a);
  taps.weight[3] = CubicConvolution2((1.f - t) + 1.f, a);
  for (int j = 0; j < 4; ++j) {
    const Index i = first - 1 + j;
    taps.index[j] = Max<Index>(Min<Index>(i, in - 1), 0);
  }
  return taps;
}

// ((v0 * w0 + v1 * w1) + v2 * w2) + v3 * w3: PyTorch's order, for a row's four columns and for the
// four rows' sums.
OPBRIDGE_HD inline float CubicSum(float v0, float v1, float v2, float v3, const float w[4]) {
  float acc = v0 * w[0];
  acc += v1 * w[1];
  acc += v2 * w[2];
  acc += v3 * w[3];
  return acc;
}

// Output (y, x) of one plane [in_h, in_w] from its row taps ty and column taps tx.
template <class Index>
OPBRIDGE_HD inline float BicubicValue(const float* plane, Index in_w, const CubicTaps<Index>& ty,
                                      const CubicTaps<Index>& tx) {
  float rows[4];
  for (int j = 0; j < 4; ++j) {
    const float* line = plane + ty.index[j] * in_w;
    rows[j] = CubicSum(line[tx.index[0]], line[tx.index[1]], line[tx.index[2]], line[tx.index[3]], tx.weight);
  }
  return CubicSum(rows[0], rows[1], rows[2], rows[3], ty.weight);
}

}  // namespace opbridge::shared
