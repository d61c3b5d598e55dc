// ATen's grid_sampler_3d rules as host-and-device functions: F.grid_sample on 5-D input [N, C, D,
// H, W] with a grid [N, Do, Ho, Wo, 3] of (x, y, z), as PyTorch's CPU kernel computes it (the
// scalar grid_sampler_3d_cpu_impl of ATen's GridSampler.cpp, whose coordinate helpers differ from
// the 2-D vectorized kernel's): "bilinear" is trilinear, "nearest" rounds half to even; bicubic
// has no 3-D form. The CPU grid sampler (kernels/cpu/grid_sample.cc) prepares its taps with these
// and the CUDA kernel computes each output point with GridSamplePoint3d below.
//
// What this gives where the coordinate is not finite, as ATen does on x86-64: zeros padding, a
// NaN or infinite coordinate (or one past int64's range) gives no corner inside the input, so the
// point is 0 (the 2-D sampler gives NaN there); border and reflection padding clip a NaN
// coordinate to the last index (std::min(size - 1, NaN) is size - 1).
#pragma once

#include <stdint.h>

#include "core/grid_sample.h"
#include "kernels/shared/grid_sample_taps.h"
#include "core/host_device.h"

namespace opbridge::shared {

// grid_sampler_unnormalize: ((coord + 1) / 2) * (size - 1) with align_corners, else
// ((coord + 1) * size - 1) / 2, in that order.
OPBRIDGE_HD inline float Unnormalize3d(float coord, int64_t size, bool align_corners) {
  return align_corners ? ((coord + 1.0f) / 2.0f) * static_cast<float>(size - 1)
                       : ((coord + 1.0f) * static_cast<float>(size) - 1.0f) / 2.0f;
}

// clip_coordinates: std::min(size - 1, std::max(in, 0)), so NaN becomes size - 1. The bound is
// the largest float <= size - 1 (float(size - 1) rounds up above 2^24, and would let an index
// one past the end through; ATen reads it).
OPBRIDGE_HD inline float ClipCoordinate3d(float in, int64_t size) {
  return Min(LargestFloatAtMost(size - 1), Max(in, 0.0f));
}

// reflect_coordinates(in, twice_low, twice_high): |in - low| folded by the span with fmod, and
// reflected when floor(|in - low| / span) is odd. ATen converts that floor to int: a value outside
// int's range (or NaN) converts to INT_MIN on x86-64, which is even.
OPBRIDGE_HD inline float ReflectCoordinate3d(float in, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0.0f;
  const float low = static_cast<float>(twice_low) / 2.0f;
  const float span = static_cast<float>(twice_high - twice_low) / 2.0f;
  in = fabsf(in - low);
  const float extra = fmodf(in, span);
  const float flips = floorf(in / span);
  const bool odd = flips >= -2147483648.0f && flips < 2147483648.0f && (static_cast<int64_t>(flips) & 1) != 0;
  return odd ? span - extra + low : extra + low;
}

// grid_sampler_compute_source_index: unnormalize, then the padding rule.
OPBRIDGE_HD inline float SourceIndex3d(float coord, int64_t size, const GridSampleParams& p) {
  coord = Unnormalize3d(coord, size, p.align_corners);
  if (p.padding == GridPadding::kBorder) {
    coord = ClipCoordinate3d(coord, size);
  } else if (p.padding == GridPadding::kReflection) {
    coord = p.align_corners ? ReflectCoordinate3d(coord, 0, 2 * (size - 1)) : ReflectCoordinate3d(coord, -1, 2 * size - 1);
    coord = ClipCoordinate3d(coord, size);
  }
  return coord;
}

struct GridGeometry3d {
  GridSampleParams p;
  int64_t in_d, in_h, in_w;
};

// The lower corner along one axis, floor(v), when it is within int32's range (so that the corners
// floor(v) and floor(v) + 1 are exact integers), else false (NaN, infinite, huge: no corner of the
// point is inside, as ATen's out-of-range int64 conversion gives on x86-64).
OPBRIDGE_HD inline bool LowerCorner(float v, int64_t* corner) {
  const float f = floorf(v);
  if (!(f >= -2147483648.0f && f < 2147483648.0f)) return false;
  *corner = static_cast<int64_t>(f);
  return true;
}

// Trilinear taps of one grid point: the volume offsets of the 8 corners in ATen's order (tnw, tne,
// tsw, tse, bnw, bne, bsw, bse: t/b the lower/upper z, n/s the lower/upper y, w/e the lower/upper
// x; -1 for a corner outside the input) and ATen's weights, each a product of three distances in
// x, y, z order.
OPBRIDGE_HD inline void TrilinearTaps(const GridGeometry3d& g, float gx, float gy, float gz, int32_t offs[8],
                                      float w[8]) {
  const float ix = SourceIndex3d(gx, g.in_w, g.p), iy = SourceIndex3d(gy, g.in_h, g.p),
              iz = SourceIndex3d(gz, g.in_d, g.p);
  int64_t x0 = 0, y0 = 0, z0 = 0;
  if (!LowerCorner(ix, &x0) || !LowerCorner(iy, &y0) || !LowerCorner(iz, &z0)) {
    for (int k = 0; k < 8; ++k) {
      offs[k] = -1;
      w[k] = 0.0f;
    }
    return;
  }
  // Distances to the lower (w, n, t) and upper (e, s, b) corners, as ATen subtracts them: the int64
  // corner converted to float.
  const float east = static_cast<float>(x0 + 1) - ix, west = ix - static_cast<float>(x0);
  const float south = static_cast<float>(y0 + 1) - iy, north = iy - static_cast<float>(y0);
  const float bottom = static_cast<float>(z0 + 1) - iz, top = iz - static_cast<float>(z0);
  w[0] = east * south * bottom;  // tnw
  w[1] = west * south * bottom;  // tne
  w[2] = east * north * bottom;  // tsw
  w[3] = west * north * bottom;  // tse
  w[4] = east * south * top;     // bnw
  w[5] = west * south * top;     // bne
  w[6] = east * north * top;     // bsw
  w[7] = west * north * top;     // bse
  for (int k = 0; k < 8; ++k) {
    const int64_t x = x0 + (k & 1), y = y0 + ((k >> 1) & 1), z = z0 + ((k >> 2) & 1);
    const bool inside = x >= 0 && x < g.in_w && y >= 0 && y < g.in_h && z >= 0 && z < g.in_d;
    offs[k] = inside ? static_cast<int32_t>((z * g.in_h + y) * g.in_w + x) : -1;
  }
}

// One channel's value at trilinear taps: ATen's out = 0, then out += v * w for each corner inside,
// in tap order (a corner outside adds nothing, not 0 * w).
template <class T>
OPBRIDGE_HD inline float TrilinearValue(const T* volume, const int32_t offs[8], const float w[8]) {
  float out = 0.0f;
  for (int k = 0; k < 8; ++k) {
    if (offs[k] >= 0) out += Load(volume + offs[k]) * w[k];
  }
  return out;
}

// Nearest tap of one grid point: the rounded (half to even) index, or -1 when outside (or NaN).
OPBRIDGE_HD inline int32_t NearestTap3d(const GridGeometry3d& g, float gx, float gy, float gz) {
  int64_t x = 0, y = 0, z = 0;
  if (!WholeIndex(nearbyintf(SourceIndex3d(gx, g.in_w, g.p)), 0, g.in_w, &x) ||
      !WholeIndex(nearbyintf(SourceIndex3d(gy, g.in_h, g.p)), 0, g.in_h, &y) ||
      !WholeIndex(nearbyintf(SourceIndex3d(gz, g.in_d, g.p)), 0, g.in_d, &z)) {
    return -1;
  }
  return static_cast<int32_t>((z * g.in_h + y) * g.in_w + x);
}

// What the CUDA kernel's thread for output point `index` of [N, Do, Ho, Wo] (out_volume = Do * Ho
// * Wo) computes: the point's taps, once, then its value in every channel of its image (T: the
// storage type of the input, the grid and the output, as GridSamplePoint's).
template <class T>
OPBRIDGE_HD inline void GridSamplePoint3d(const GridGeometry3d& g, const T* input, int64_t channels,
                                          const T* grid, int64_t out_volume, int64_t index, T* output) {
  const int64_t n = index / out_volume;
  const float gx = Load(grid + 3 * index), gy = Load(grid + 3 * index + 1), gz = Load(grid + 3 * index + 2);
  const int64_t in_volume = g.in_d * g.in_h * g.in_w;
  const T* in = input + n * channels * in_volume;
  T* out = output + n * channels * out_volume + index % out_volume;
  if (g.p.interpolation == GridInterpolation::kNearest) {
    const int32_t offset = NearestTap3d(g, gx, gy, gz);
    for (int64_t c = 0; c < channels; ++c) Store(out + c * out_volume, Read(in + c * in_volume, offset));
  } else {
    int32_t offs[8];
    float w[8];
    TrilinearTaps(g, gx, gy, gz, offs, w);
    for (int64_t c = 0; c < channels; ++c) Store(out + c * out_volume, TrilinearValue(in + c * in_volume, offs, w));
  }
}

}  // namespace opbridge::shared
