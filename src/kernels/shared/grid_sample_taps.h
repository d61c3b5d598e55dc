// ATen's grid_sampler_2d rules as host-and-device functions: unnormalizing grid coordinates, the
// border and reflection padding rules, and the taps (neighbours and weights) of one grid point for
// bilinear, nearest (round half to even) and bicubic (A = -0.75) interpolation, where every tap
// outside the input reads 0. The CPU grid sampler (kernels/cpu/grid_sample.cc) and multi-scale
// deformable attention compute their taps with these; the CUDA grid sampler
// (kernels/cuda/grid_sample.cu) computes each output point with GridSamplePoint below.
#pragma once

#include <stdint.h>

#include "core/grid_sample.h"
#include "core/half_storage.h"
#include "core/host_device.h"
#include "kernels/shared/cubic_convolution.h"

namespace opbridge::shared {

// A grid coordinate in input pixels: (coord + 1) * ((size - 1) / 2) with align_corners, else
// (coord + 1) * (size / 2) - 0.5, as one formula without a branch (subtracting 0 leaves every
// float as it is), so that loops over points vectorize.
struct Unnormalizer {
  OPBRIDGE_HD Unnormalizer(int64_t size, bool align_corners)
      : scale(align_corners ? static_cast<float>(size - 1) / 2.0f : static_cast<float>(size) / 2.0f),
        shift(align_corners ? 0.0f : 0.5f) {}
  OPBRIDGE_HD float operator()(float coord) const { return (coord + 1.0f) * scale - shift; }
  float scale, shift;
};

// The largest float <= n (n >= 0): float(n) rounds up for some n above 2^24, and a bound that
// rounded up would let an index one past the end through.
OPBRIDGE_HD inline float LargestFloatAtMost(int64_t n) {
  float f = static_cast<float>(n);
  if (static_cast<int64_t>(f) > n) f = nextafterf(f, 0.0f);
  return f;
}

// A height x width plane as GridSampleBilinearTap needs it (sizes below 2^31).
struct GridTapBounds {
  OPBRIDGE_HD GridTapBounds(int64_t height, int64_t width)
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
OPBRIDGE_HD inline GridBilinearTap GridSampleBilinearTap(float x, float y, const GridTapBounds& bounds) {
  const float fx = floorf(x), fy = floorf(y);
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

// The integer value of a whole-number coordinate v when it lies in [low, size) (low is -1 or 0),
// else false (NaN too). The comparison with size is made on integers: float(size) rounds once
// size exceeds 2^24, and a float bound then lets an index one past the end through.
OPBRIDGE_HD inline bool WholeIndex(float v, int64_t low, int64_t size, int64_t* index) {
  if (!(v >= static_cast<float>(low) && v < 2147483648.0f)) return false;  // also keeps the cast defined
  *index = static_cast<int64_t>(v);
  return *index < size;
}

// Clamps to [0, size - 1]; NaN becomes 0, as in ATen. The upper bound is the largest float
// <= size - 1: float(size - 1) rounds up for some sizes above 2^24, and ATen's clamp to it then
// reads one element past the input (border and reflection padding); opbridge does not.
OPBRIDGE_HD inline float ClipCoordinate(float in, int64_t size) {
  if (IsNan(in)) return 0.0f;
  return Min(LargestFloatAtMost(size - 1), Max(in, 0.0f));
}

// Reflects about the borders (pixel centres 0 and size - 1 with align_corners, else the outer
// edges -0.5 and size - 0.5): fold |in - low| by whole double spans, then once more if needed.
// An infinite coordinate gives NaN here, which the clip that follows turns into 0 (ATen too).
OPBRIDGE_HD inline float ReflectCoordinate(float in, int64_t size, bool align_corners) {
  if (align_corners && size <= 1) return 0.0f;
  const float low = align_corners ? 0.0f : -0.5f;
  const float twice_span = align_corners ? static_cast<float>(size - 1) * 2.0f
                                         : static_cast<float>(size) * 2.0f;
  const float abs_in = fabsf(in - low);
  const float double_flips = truncf(abs_in / twice_span);
  const float extra = abs_in - double_flips * twice_span;
  const float reflected = twice_span - extra;
  // ATen's minimum propagates NaN.
  const float folded = (IsNan(extra) || IsNan(reflected)) ? NAN : Min(extra, reflected);
  return folded + low;
}

// Applies the padding rule to an unnormalized coordinate.
OPBRIDGE_HD inline float PadCoordinate(float coord, int64_t size, GridPadding padding, bool align_corners) {
  if (padding == GridPadding::kBorder) {
    coord = ClipCoordinate(coord, size);
  } else if (padding == GridPadding::kReflection) {
    coord = ClipCoordinate(ReflectCoordinate(coord, size, align_corners), size);
  }
  return coord;
}

OPBRIDGE_HD inline void CubicCoefficients(float t, float coeffs[4]) {
  constexpr float kA = -0.75f;
  coeffs[0] = CubicConvolution2(t + 1.0f, kA);
  coeffs[1] = CubicConvolution1(t, kA);
  coeffs[2] = CubicConvolution1(1.0f - t, kA);
  coeffs[3] = CubicConvolution2(2.0f - t, kA);
}

struct GridGeometry {
  OPBRIDGE_HD GridGeometry(const GridSampleParams& params, int64_t height, int64_t width)
      : p(params), in_h(height), in_w(width), unnormalize_x(width, params.align_corners),
        unnormalize_y(height, params.align_corners), bounds(height, width) {}
  GridSampleParams p;
  int64_t in_h, in_w;
  Unnormalizer unnormalize_x, unnormalize_y;
  GridTapBounds bounds;
};

// The point of grid entry (gx, gy) in input pixels, after the padding rule.
OPBRIDGE_HD inline float PointX(const GridGeometry& g, float gx) {
  return PadCoordinate(g.unnormalize_x(gx), g.in_w, g.p.padding, g.p.align_corners);
}
OPBRIDGE_HD inline float PointY(const GridGeometry& g, float gy) {
  return PadCoordinate(g.unnormalize_y(gy), g.in_h, g.p.padding, g.p.align_corners);
}

// Bilinear taps of one grid point for sampling the input plane itself: the plane offsets of the 4
// corners (north-west, north-east, south-west, south-east; -1 for a corner outside the input) and
// their weights.
OPBRIDGE_HD inline void PlaneBilinearTaps(const GridGeometry& g, float gx, float gy, int32_t offs[4], float w[4]) {
  const GridBilinearTap t = GridSampleBilinearTap(PointX(g, gx), PointY(g, gy), g.bounds);
  w[0] = t.nw;
  w[1] = t.ne;
  w[2] = t.sw;
  w[3] = t.se;
  // x0 is in [-1, W - 1] and y0 in [-1, H] (H: no corner inside).
  const bool west_in = t.x0 >= 0, east_in = t.x0 + 1 < g.in_w;
  const bool north_in = t.y0 >= 0 && t.y0 < g.in_h, south_in = t.y0 + 1 < g.in_h;
  const int64_t base = static_cast<int64_t>(t.y0) * g.in_w + t.x0;
  offs[0] = north_in && west_in ? static_cast<int32_t>(base) : -1;
  offs[1] = north_in && east_in ? static_cast<int32_t>(base + 1) : -1;
  offs[2] = south_in && west_in ? static_cast<int32_t>(base + g.in_w) : -1;
  offs[3] = south_in && east_in ? static_cast<int32_t>(base + g.in_w + 1) : -1;
}

// Reads plane[offset] as a float (T: the storage type, float, Float16 or BFloat16: half_storage.h),
// or 0 for the sentinel offset -1 (a tap outside the input).
template <class T>
OPBRIDGE_HD inline float Read(const T* plane, int32_t offset) { return offset >= 0 ? Load(plane + offset) : 0.0f; }

// Nearest tap of one grid point: an offset, or -1 when outside (or NaN).
OPBRIDGE_HD inline int32_t NearestTap(const GridGeometry& g, float gx, float gy) {
  const float ix = PointX(g, gx), iy = PointY(g, gy);
  // nearbyint rounds half to even under the default rounding mode, like ATen's CPU kernel.
  const float rx = nearbyintf(ix), ry = nearbyintf(iy);
  int64_t x = 0, y = 0;
  if (!WholeIndex(rx, 0, g.in_w, &x) || !WholeIndex(ry, 0, g.in_h, &y)) return -1;
  return static_cast<int32_t>(y * g.in_w + x);
}

// Bicubic taps of one grid point: 4 column offsets, 4 row offsets (-1 when outside) and the
// separable weights. ATen pads each of the 16 integer tap coordinates, not the sample point.
OPBRIDGE_HD inline void BicubicTaps(const GridGeometry& g, float gx, float gy, int32_t cols[4], int32_t rows[4],
                                    float wx[4], float wy[4]) {
  const float ix = g.unnormalize_x(gx), iy = g.unnormalize_y(gy);
  const float fx = floorf(ix), fy = floorf(iy);
  CubicCoefficients(ix - fx, wx);
  CubicCoefficients(iy - fy, wy);
  const bool finite = IsFinite(fx) && IsFinite(fy);
  for (int k = 0; k < 4; ++k) {
    cols[k] = rows[k] = -1;
    if (!finite) continue;
    const float cx = PadCoordinate(fx - 1.0f + k, g.in_w, g.p.padding, g.p.align_corners);
    const float cy = PadCoordinate(fy - 1.0f + k, g.in_h, g.p.padding, g.p.align_corners);
    int64_t x = 0, y = 0;
    if (WholeIndex(cx, 0, g.in_w, &x)) cols[k] = static_cast<int32_t>(x);
    if (WholeIndex(cy, 0, g.in_h, &y)) rows[k] = static_cast<int32_t>(y * g.in_w);
  }
}

// One channel's value at bilinear taps: ATen's (nw_val * nw) + (ne_val * ne) + (sw_val * sw) +
// (se_val * se).
template <class T>
OPBRIDGE_HD inline float BilinearValue(const T* plane, const int32_t offs[4], const float w[4]) {
  return Read(plane, offs[0]) * w[0] + Read(plane, offs[1]) * w[1] + Read(plane, offs[2]) * w[2] +
         Read(plane, offs[3]) * w[3];
}

// One channel's value at bicubic taps: along x within each of the 4 rows, then along y (ATen's order).
template <class T>
OPBRIDGE_HD inline float BicubicValue(const T* plane, const int32_t cols[4], const int32_t rows[4],
                                      const float wx[4], const float wy[4]) {
  float row_values[4];
  for (int k = 0; k < 4; ++k) {
    const int32_t r = rows[k];
    float v[4];
    for (int j = 0; j < 4; ++j) v[j] = (r >= 0 && cols[j] >= 0) ? Load(plane + r + cols[j]) : 0.0f;
    row_values[k] = v[0] * wx[0] + v[1] * wx[1] + v[2] * wx[2] + v[3] * wx[3];
  }
  return row_values[0] * wy[0] + row_values[1] * wy[1] + row_values[2] * wy[2] + row_values[3] * wy[3];
}

// What the CUDA kernel's thread for output point `index` of [N, Ho, Wo] (out_plane = Ho * Wo)
// computes: the point's taps, once, then its value in every channel of its image. The CPU kernel
// computes each value with the same taps and the same functions. T is the storage type of the
// input, the grid and the output; each value is rounded once to it as it is stored.
template <class T>
OPBRIDGE_HD inline void GridSamplePoint(const GridGeometry& g, const T* input, int64_t channels, const T* grid,
                                        int64_t out_plane, int64_t index, T* output) {
  const int64_t n = index / out_plane;
  const float gx = Load(grid + 2 * index), gy = Load(grid + 2 * index + 1);
  const int64_t in_plane = g.in_h * g.in_w;
  const T* in = input + n * channels * in_plane;
  T* out = output + n * channels * out_plane + index % out_plane;
  if (g.p.interpolation == GridInterpolation::kBilinear) {
    int32_t offs[4];
    float w[4];
    PlaneBilinearTaps(g, gx, gy, offs, w);
    for (int64_t c = 0; c < channels; ++c) Store(out + c * out_plane, BilinearValue(in + c * in_plane, offs, w));
  } else if (g.p.interpolation == GridInterpolation::kNearest) {
    const int32_t offset = NearestTap(g, gx, gy);
    for (int64_t c = 0; c < channels; ++c) Store(out + c * out_plane, Read(in + c * in_plane, offset));
  } else {
    int32_t cols[4], rows[4];
    float wx[4], wy[4];
    BicubicTaps(g, gx, gy, cols, rows, wx, wy);
    for (int64_t c = 0; c < channels; ++c) {
      Store(out + c * out_plane, BicubicValue(in + c * in_plane, cols, rows, wx, wy));
    }
  }
}

}  // namespace opbridge::shared
