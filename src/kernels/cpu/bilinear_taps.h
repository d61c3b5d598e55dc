// Bilinear sampling rules as taps: the four neighbours of one point of a channel plane and their
// weights, computed once and applied to every channel. mmcv's (Caffe2's) rule is shared by the
// rotated RoI ops (RoIAlignRotated, rotated feature align); PyTorch grid_sample's rule with zeros
// padding by multi-scale deformable attention (and open to the grid sampler). Framework-free.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace opbridge::cpu {

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
inline BilinearTaps MakeBilinearTaps(float y, float x, int64_t height, int64_t width) {
  // Compared in double, as mmcv does (an int64 size need not be a float).
  if (height == 0 || width == 0 || y < -1.0f || static_cast<double>(y) > static_cast<double>(height) ||
      x < -1.0f || static_cast<double>(x) > static_cast<double>(width)) {
    return {kTapsOutside, 0, 0, {0.f, 0.f, 0.f, 0.f}};
  }
  if (std::isnan(y) || std::isnan(x)) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return {0, 0, 0, {nan, nan, nan, nan}};
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
inline float BilinearSample(const BilinearTaps& t, const float* plane, int64_t width) {
  if (t.base == kTapsOutside) return 0.0f;
  const float* low = plane + t.base;
  const float* high = low + t.dy * width;
  return t.w[0] * low[0] + t.w[1] * low[t.dx] + t.w[2] * high[0] + t.w[3] * high[t.dx];
}

// PyTorch grid_sample's bilinear rule with zeros padding, for the point (x, y) in pixel
// coordinates (0 at the centre of the first column or row; align_corners=False maps a normalized
// g there as (g + 1) * (W / 2) - 0.5). The corners are north-west, north-east, south-west and
// south-east, ATen's order: index[k] is y * width + x, or kTapsOutside for a corner outside the
// plane, which reads 0 but keeps its weight (a NaN weight still makes the sample NaN, as in ATen).
struct ZerosPaddedTaps {
  int64_t index[4];
  float w[4];
};

// The weights are ATen's: with (x0, y0) = floor((x, y)), west = x - x0, north = y - y0, and
// w = {(1 - north)(1 - west), (1 - north) west, north (1 - west), north west}. A NaN or infinite
// coordinate gives NaN weights and no corner inside: the sample is NaN, as F.grid_sample gives.
// A finite coordinate far outside has every corner outside and reads 0; it is compared as a
// float before any integer conversion, so nothing overflows.
inline ZerosPaddedTaps MakeZerosPaddedTaps(float x, float y, int64_t height, int64_t width) {
  const float fx = std::floor(x), fy = std::floor(y);
  const float west = x - fx, east = 1.0f - west;
  const float north = y - fy, south = 1.0f - north;
  ZerosPaddedTaps t{{kTapsOutside, kTapsOutside, kTapsOutside, kTapsOutside},
                    {south * east, south * west, north * east, north * west}};
  // Only a north-west corner in [-1, W - 1] x [-1, H - 1] has a corner inside. 2^62 bounds the
  // conversion (NaN fails the comparison); the sizes are compared as integers, exactly.
  constexpr float kLimit = 4611686018427387904.0f;  // 2^62
  if (!(fx >= -1.0f && fx < kLimit && fy >= -1.0f && fy < kLimit)) return t;
  const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  if (x0 > width - 1 || y0 > height - 1) return t;
  const bool west_in = x0 >= 0, east_in = x0 + 1 < width;
  const bool north_in = y0 >= 0, south_in = y0 + 1 < height;
  const int64_t base = y0 * width + x0;
  if (north_in && west_in) t.index[0] = base;
  if (north_in && east_in) t.index[1] = base + 1;
  if (south_in && west_in) t.index[2] = base + width;
  if (south_in && east_in) t.index[3] = base + width + 1;
  return t;
}

}  // namespace opbridge::cpu
