// Bilinear sampling rules as taps: the four neighbours of one point of a channel plane and their
// weights, computed once and applied to every channel. Framework-free. Three sections:
// - mmcv's (Caffe2's) rule, shared by the rotated RoI ops (RoIAlignRotated, rotated feature align);
// - PaddedImage, a plane with a border of zeros (deformable convolution, the grid sampler);
// - ATen's grid_sampler_2d rule, its unnormalization and bilinear taps (the grid sampler reads a
//   PaddedImage, multi-scale deformable attention tests each corner against the plane).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace opbridge::cpu {

// ---- mmcv's rule ---------------------------------------------------------------------------------

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

// ---- A plane with a border of zeros ----------------------------------------------------------------

// Pixel (y, x) of a height x width map is at Index(y, x) of [H + 3][W + 2]: one zero row above,
// two below, one zero column each side. A bilinear sample whose north-west corner (x0, y0) lies in
// [-1, W - 1] x [-1, H - 1] then reads its 4 corners at Index(y0, x0), + 1, + Stride() and
// + Stride() + 1 without a test: corners outside the map land on the border. A sample with no
// corner inside reads the 2 x 2 block of zeros at ZeroBlock() (Index(H, -1), the bottom-left
// corner of the border), so that it is 0 even next to an infinite or NaN input.
struct PaddedImage {
  int64_t height, width;  // of the map
  int64_t Stride() const { return width + 2; }
  int64_t Pixels() const { return (height + 3) * Stride(); }
  int64_t Index(int64_t y, int64_t x) const { return (y + 1) * Stride() + (x + 1); }
  int64_t ZeroBlock() const { return (height + 1) * Stride(); }  // top-left of a 2 x 2 block of zeros
};

// ---- ATen's grid_sampler_2d rule -----------------------------------------------------------------

// A grid coordinate in input pixels: (coord + 1) * ((size - 1) / 2) with align_corners, else
// (coord + 1) * (size / 2) - 0.5, as one formula without a branch (subtracting 0 leaves every
// float as it is), so that loops over points vectorize.
struct Unnormalizer {
  Unnormalizer(int64_t size, bool align_corners)
      : scale(align_corners ? static_cast<float>(size - 1) / 2.0f : static_cast<float>(size) / 2.0f),
        shift(align_corners ? 0.0f : 0.5f) {}
  float operator()(float coord) const { return (coord + 1.0f) * scale - shift; }
  float scale, shift;
};

// The largest float <= n (n >= 0): float(n) rounds up for some n above 2^24, and a bound that
// rounded up would let an index one past the end through.
inline float LargestFloatAtMost(int64_t n) {
  float f = static_cast<float>(n);
  if (static_cast<int64_t>(f) > n) f = std::nextafter(f, 0.0f);
  return f;
}

// A height x width plane as GridSampleBilinearTap needs it (sizes below 2^31).
struct GridTapBounds {
  GridTapBounds(int64_t height, int64_t width)
      : last_x(LargestFloatAtMost(width - 1)), last_y(LargestFloatAtMost(height - 1)),
        height(static_cast<int32_t>(height)) {}
  float last_x, last_y;  // the largest floats <= W - 1 and <= H - 1
  int32_t height;
};

// The taps of one point: the north-west corner (x0, y0) and the weights of the corners
// (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1).
struct GridBilinearTap {
  int32_t x0, y0;
  float nw, ne, sw, se;
};

// ATen's bilinear taps of the point (x, y), in pixels (grid coordinates already unnormalized and
// padded): (x0, y0) = (floor(x), floor(y)), weights from the distances to the 4 sides, and every
// corner outside the plane reads 0. A point whose corner lies in [-1, W - 1] x [-1, H - 1] keeps
// it; a point with no corner inside (a coordinate below -1, at or past the last row or column + 1,
// huge, infinite or NaN) gets the corner (-1, H), PaddedImage's zero block, whose 4 corners are
// all outside. The weights are kept as ATen computes them, so such a sample is 0 * weight: NaN
// for an infinite or NaN coordinate (whose weights are NaN), as in ATen, else 0. The sample is
// ATen's nw * v_nw + ne * v_ne + sw * v_sw + se * v_se, in that order. A caller that does not read
// a PaddedImage tests each corner: (x0 + dx, y0 + dy) is inside when 0 <= x0 + dx < W and
// 0 <= y0 + dy < H. Branch-free, so that loops over points vectorize (GCC vectorizes floorf only
// with -fno-trapping-math, which CMakeLists.txt sets for the files that need it).
inline GridBilinearTap GridSampleBilinearTap(float x, float y, const GridTapBounds& bounds) {
  const float fx = std::floor(x), fy = std::floor(y);
  const float west = x - fx, east = 1.0f - west;    // distances to the west and east sides
  const float north = y - fy, south = 1.0f - north;  // distances to the north and south sides
  // Compared as floats with exact bounds; false for NaN. Only then is the integer cast defined.
  // (Every field is read unconditionally: a load under a condition stops GCC vectorizing.)
  const float last_x = bounds.last_x, last_y = bounds.last_y;
  const int32_t outside_y = bounds.height;
  const bool touches = (fx >= -1.0f) & (fx <= last_x) & (fy >= -1.0f) & (fy <= last_y);
  const int32_t x0 = static_cast<int32_t>(touches ? fx : -1.0f);
  const int32_t y0 = static_cast<int32_t>(touches ? fy : 0.0f);
  return {x0, touches ? y0 : outside_y, south * east, south * west, north * east, north * west};
}

}  // namespace opbridge::cpu
