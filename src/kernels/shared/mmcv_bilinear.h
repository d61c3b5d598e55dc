// mmcv's (Caffe2's) bilinear rule as host-and-device functions: the four neighbours of a point of
// one channel plane and their weights (taps), computed once and applied to every channel, and a
// sample's value. The rotated RoI ops' CPU kernels (RoIAlignRotated, rotated feature align, their
// multi-level form) and their CUDA kernels sample with these, so both give the same bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// The neighbours are the pixels base, base + dx, base + dy * width and base + dy * width + dx of
// a plane (dx, dy are 0 at the last column or row, else 1), with mmcv's weights w1..w4 = hy*hx,
// hy*lx, ly*hx, ly*lx: 32 bytes. base = kTapsOutside marks a point outside the map, which reads 0.
struct BilinearTaps {
  int64_t base;
  int32_t dx, dy;
  float w[4];
};
constexpr int64_t kTapsOutside = -1;

// mmcv's bilinear_interpolate for the point (y, x) of a height x width plane. A point with
// y < -1, y > H, x < -1 or x > W (or on an empty plane) is outside; this is tested first, as
// mmcv does, so a NaN coordinate of a point whose other coordinate is out of range is outside
// too. Otherwise a NaN coordinate gives NaN weights on pixel 0 (mmcv converts NaN to an int,
// which is undefined): the sample is NaN. Then coordinates <= 0 become 0, and neighbours past
// the last row or column are clamped to it (edge replicate).
OPBRIDGE_HD inline BilinearTaps MakeBilinearTaps(float y, float x, int64_t height, int64_t width) {
  // Compared in double, as mmcv does (an int64 size need not be a float).
  if (height == 0 || width == 0 || y < -1.0f || static_cast<double>(y) > static_cast<double>(height) ||
      x < -1.0f || static_cast<double>(x) > static_cast<double>(width)) {
    return {kTapsOutside, 0, 0, {0.f, 0.f, 0.f, 0.f}};
  }
  if (y != y || x != x) {
    return {0, 0, 0, {NAN, NAN, NAN, NAN}};
  }
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  // y lies in [0, H] now: the conversion is defined and truncates as mmcv's (int) does.
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int32_t dy = 1, dx = 1;
  if (y_low >= height - 1) {
    y_low = height - 1;
    dy = 0;
    y = static_cast<float>(y_low);
  }
  if (x_low >= width - 1) {
    x_low = width - 1;
    dx = 0;
    x = static_cast<float>(x_low);
  }
  const float ly = y - static_cast<float>(y_low), lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly, hx = 1.0f - lx;  // mmcv's 1. - ly: the same float
  return {y_low * width + x_low, dx, dy, {hy * hx, hy * lx, ly * hx, ly * lx}};
}

// The point's value in one plane: mmcv's w1*v1 + w2*v2 + w3*v3 + w4*v4, in that order; 0 outside.
OPBRIDGE_HD inline float BilinearSample(const BilinearTaps& t, const float* plane, int64_t width) {
  if (t.base == kTapsOutside) return 0.0f;
  const float* low = plane + t.base;
  const float* high = low + t.dy * width;
  return t.w[0] * low[0] + t.w[1] * low[t.dx] + t.w[2] * high[0] + t.w[3] * high[t.dx];
}

}  // namespace opbridge::shared
