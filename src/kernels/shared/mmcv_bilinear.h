// mmcv's (Caffe2's) bilinear rule as host-and-device functions: the four neighbours of a point of
// one channel plane and their weights (taps), computed once and applied to every channel, and a
// sample's value. The rotated RoI ops' CPU kernels (RoIAlignRotated, rotated feature align, their
// multi-level form) and their CUDA kernels sample with these, so both give the same bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/half_storage.h"
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

// The bits of v, up to its highest set one (0 for 0).
OPBRIDGE_HD inline int BitLength(uint64_t v) {
  int length = 0;
  while (length < 64 && (v >> length) != 0) ++length;
  return length;
}

// The largest float <= the double nearest size (size >= 0): size itself below 2^24; else, past 2^53,
// size rounded to double first (to nearest, ties to even, in integers), then cleared below its 24
// leading bits, which a float holds exactly. For any float y, y > FloatAtMost(size) exactly when
// double(y) > double(size) (a float above the largest float <= a value is above the value), and a
// NaN compares false both ways: mmcv's comparison in double, with integer and float operations only
// (float64 runs at 1/64 of the float rate on sm_86 and sm_89).
OPBRIDGE_HD inline float FloatAtMost(int64_t size) {
  if (size < (int64_t{1} << 24)) return static_cast<float>(size);
  uint64_t v = static_cast<uint64_t>(size);
  int length = BitLength(v);
  if (length > 53) {
    const int shift = length - 53;
    const uint64_t rest = v & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    v >>= shift;
    if (rest > half || (rest == half && (v & 1) != 0)) ++v;
    v <<= shift;  // at most 2^63: size < 2^63
    length = BitLength(v);
  }
  return static_cast<float>((v >> (length - 24)) << (length - 24));
}

// mmcv's bilinear_interpolate for the point (y, x) of a height x width plane. A point with
// y < -1, y > H, x < -1 or x > W (or on an empty plane) is outside; this is tested first, as
// mmcv does, so a NaN coordinate of a point whose other coordinate is out of range is outside
// too. Otherwise a NaN coordinate gives NaN weights on pixel 0 (mmcv converts NaN to an int,
// which is undefined): the sample is NaN. Then coordinates <= 0 become 0, and neighbours past
// the last row or column are clamped to it (edge replicate).
OPBRIDGE_HD inline BilinearTaps MakeBilinearTaps(float y, float x, int64_t height, int64_t width) {
  // mmcv compares in double (an int64 size need not be a float): FloatAtMost gives the same answers.
  if (height == 0 || width == 0 || y < -1.0f || y > FloatAtMost(height) || x < -1.0f || x > FloatAtMost(width)) {
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
// T: the plane's storage type (float, Float16 or BFloat16), each value read as the float it holds.
template <class T>
OPBRIDGE_HD inline float BilinearSample(const BilinearTaps& t, const T* plane, int64_t width) {
  if (t.base == kTapsOutside) return 0.0f;
  const T* low = plane + t.base;
  const T* high = low + t.dy * width;
  return t.w[0] * Load(low) + t.w[1] * Load(low + t.dx) + t.w[2] * Load(high) + t.w[3] * Load(high + t.dx);
}

}  // namespace opbridge::shared
