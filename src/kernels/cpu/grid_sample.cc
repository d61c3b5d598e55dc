// Grid sampler CPU kernel.
//
// The semantics are ATen's grid_sampler_2d: unnormalize, then border clipping or reflection,
// then bilinear / nearest (round half to even) / bicubic (A = -0.75) interpolation, where every
// tap outside the input reads 0. The coordinate formulas are those of its vectorized CPU kernel
// (see Unnormalize below).
//
// Every output element is written by exactly one task, so results do not depend on threads.
#include "kernels/cpu/grid_sample.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/pixel_chunks.h"

namespace opbridge::cpu {
namespace {

// Work layout, chosen by measurement inside ORT against ORT's built-in GridSample
// (grid_sample.warp: random grid, 32 channels of 256x256): the taps (plane offsets and weights)
// of a chunk of output pixels are computed once for all channels into scratch memory, then each
// task interpolates one channel plane, which stays in the core's cache, at a run of those taps.
// Interpolating all channels of a small pixel block per task instead (taps on the stack) reads
// 32 planes at random per block and was 1.3-2x slower in all modes.
constexpr int64_t kChunkPixels = 16384;
constexpr int64_t kTapBlock = 1024;
constexpr int64_t kRunPixels = 4096;
constexpr int64_t kMaxTapWords = 16;  // 32-bit words of taps per pixel, at most (bicubic)

// 32-bit words of taps per pixel: packed tightly, since the interpolation streams them.
int64_t TapWords(GridInterpolation interpolation) {
  switch (interpolation) {
    case GridInterpolation::kBilinear: return 8;   // 4 offsets, 4 weights
    case GridInterpolation::kNearest: return 1;    // 1 offset
    case GridInterpolation::kBicubic: return 16;   // 4 columns, 4 row offsets, 4 + 4 weights
  }
  return kMaxTapWords;
}

float Unnormalize(float coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1.0f) * (static_cast<float>(size - 1) / 2.0f)
                       : (coord + 1.0f) * (static_cast<float>(size) / 2.0f) - 0.5f;
}

// The integer value of a whole-number coordinate v when it lies in [low, size) (low is -1 or 0),
// else false (NaN too). The comparison with size is made on integers: float(size) rounds once
// size exceeds 2^24, and a float bound then lets an index one past the end through.
inline bool WholeIndex(float v, int64_t low, int64_t size, int64_t* index) {
  if (!(v >= static_cast<float>(low) && v < 2147483648.0f)) return false;  // also keeps the cast defined
  *index = static_cast<int64_t>(v);
  return *index < size;
}

// Clamps to [0, size - 1]; NaN becomes 0, as in ATen. The upper bound is the largest float
// <= size - 1: float(size - 1) rounds up for some sizes above 2^24, and ATen's clamp to it then
// reads one element past the input (border and reflection padding); opbridge does not.
float ClipCoordinate(float in, int64_t size) {
  if (std::isnan(in)) return 0.0f;
  float last = static_cast<float>(size - 1);
  if (static_cast<int64_t>(last) > size - 1) last = std::nextafter(last, 0.0f);
  return std::min(last, std::max(in, 0.0f));
}

// Reflects about the borders (pixel centres 0 and size - 1 with align_corners, else the outer
// edges -0.5 and size - 0.5): fold |in - low| by whole double spans, then once more if needed.
// An infinite coordinate gives NaN here, which the clip that follows turns into 0 (ATen too).
float ReflectCoordinate(float in, int64_t size, bool align_corners) {
  if (align_corners && size <= 1) return 0.0f;
  const float low = align_corners ? 0.0f : -0.5f;
  const float twice_span = align_corners ? static_cast<float>(size - 1) * 2.0f
                                         : static_cast<float>(size) * 2.0f;
  const float abs_in = std::fabs(in - low);
  const float double_flips = std::trunc(abs_in / twice_span);
  const float extra = abs_in - double_flips * twice_span;
  const float reflected = twice_span - extra;
  // ATen's minimum propagates NaN.
  const float folded = (std::isnan(extra) || std::isnan(reflected)) ? NAN : std::min(extra, reflected);
  return folded + low;
}

// Applies the padding rule to an unnormalized coordinate.
float PadCoordinate(float coord, int64_t size, GridPadding padding, bool align_corners) {
  if (padding == GridPadding::kBorder) {
    coord = ClipCoordinate(coord, size);
  } else if (padding == GridPadding::kReflection) {
    coord = ClipCoordinate(ReflectCoordinate(coord, size, align_corners), size);
  }
  return coord;
}

float CubicConvolution1(float x, float a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
float CubicConvolution2(float x, float a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

void CubicCoefficients(float t, float coeffs[4]) {
  constexpr float kA = -0.75f;
  coeffs[0] = CubicConvolution2(t + 1.0f, kA);
  coeffs[1] = CubicConvolution1(t, kA);
  coeffs[2] = CubicConvolution1(1.0f - t, kA);
  coeffs[3] = CubicConvolution2(2.0f - t, kA);
}

struct Geometry {
  GridSampleParams p;
  int64_t in_h, in_w;
};

// Bilinear taps of one grid point: the plane offsets of the 4 corners (north-west, north-east,
// south-west, south-east; -1 for a corner outside the input) and their weights.
void BilinearTaps(const Geometry& g, float gx, float gy, int32_t offs[4], float w[4]) {
  const float ix = PadCoordinate(Unnormalize(gx, g.in_w, g.p.align_corners), g.in_w, g.p.padding,
                                 g.p.align_corners);
  const float iy = PadCoordinate(Unnormalize(gy, g.in_h, g.p.align_corners), g.in_h, g.p.padding,
                                 g.p.align_corners);
  const float fx = std::floor(ix), fy = std::floor(iy);
  const float west = ix - fx, east = 1.0f - west;    // distances to the west and east sides
  const float north = iy - fy, south = 1.0f - north;  // distances to the north and south sides
  w[0] = south * east;
  w[1] = south * west;
  w[2] = north * east;
  w[3] = north * west;
  for (int k = 0; k < 4; ++k) offs[k] = -1;
  // Only corners with x0 in [-1, W-1] and y0 in [-1, H-1] can touch the input. NaN and huge
  // coordinates never reach the integer cast; their weights stay NaN or finite as ATen computes
  // them, and all their taps read 0.
  int64_t x0 = 0, y0 = 0;
  if (!WholeIndex(fx, -1, g.in_w, &x0) || !WholeIndex(fy, -1, g.in_h, &y0)) return;
  const bool west_in = x0 >= 0, east_in = x0 + 1 < g.in_w;
  const bool north_in = y0 >= 0, south_in = y0 + 1 < g.in_h;
  const int32_t base = static_cast<int32_t>(y0 * g.in_w + x0);
  const int32_t row = static_cast<int32_t>(g.in_w);
  if (north_in && west_in) offs[0] = base;
  if (north_in && east_in) offs[1] = base + 1;
  if (south_in && west_in) offs[2] = base + row;
  if (south_in && east_in) offs[3] = base + row + 1;
}

// Reads plane[offset], or 0 for the sentinel offset -1 (a tap outside the input).
inline float Read(const float* plane, int32_t offset) { return offset >= 0 ? plane[offset] : 0.0f; }

// Nearest tap of one grid point: an offset, or -1 when outside (or NaN).
int32_t NearestTap(const Geometry& g, float gx, float gy) {
  const float ix = PadCoordinate(Unnormalize(gx, g.in_w, g.p.align_corners), g.in_w, g.p.padding,
                                 g.p.align_corners);
  const float iy = PadCoordinate(Unnormalize(gy, g.in_h, g.p.align_corners), g.in_h, g.p.padding,
                                 g.p.align_corners);
  // nearbyint rounds half to even under the default rounding mode, like ATen's CPU kernel.
  const float rx = std::nearbyint(ix), ry = std::nearbyint(iy);
  int64_t x = 0, y = 0;
  if (!WholeIndex(rx, 0, g.in_w, &x) || !WholeIndex(ry, 0, g.in_h, &y)) return -1;
  return static_cast<int32_t>(y * g.in_w + x);
}

// Bicubic taps of one grid point: 4 column offsets, 4 row offsets (-1 when outside) and the
// separable weights. ATen pads each of the 16 integer tap coordinates, not the sample point.
void BicubicTaps(const Geometry& g, float gx, float gy, int32_t cols[4], int32_t rows[4],
                 float wx[4], float wy[4]) {
  const float ix = Unnormalize(gx, g.in_w, g.p.align_corners);
  const float iy = Unnormalize(gy, g.in_h, g.p.align_corners);
  const float fx = std::floor(ix), fy = std::floor(iy);
  CubicCoefficients(ix - fx, wx);
  CubicCoefficients(iy - fy, wy);
  const bool finite = std::isfinite(fx) && std::isfinite(fy);
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

}  // namespace

size_t GridSampleScratchBytes() { return static_cast<size_t>(kChunkPixels * kMaxTapWords) * 4; }

Status GridSample(const GridSampleParams& p, const float* input, int64_t batch, int64_t channels,
                  int64_t in_h, int64_t in_w, const float* grid, int64_t out_h, int64_t out_w,
                  float* output, void* scratch, const TaskRunner& runner) {
  const int64_t out_plane = out_h * out_w;
  const int64_t in_plane = in_h * in_w;
  if (in_plane > INT32_MAX) {
    return Status::Error("input planes of more than 2^31 - 1 elements are not supported, got ",
                         in_h, "x", in_w);
  }
  const Geometry geo{p, in_h, in_w};
  auto* taps = static_cast<int32_t*>(scratch);
  const int64_t kTapWords = TapWords(p.interpolation);

  // 1. The taps of every pixel of a chunk, computed once for all channels.
  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    const float* grid_chunk = grid + (n * out_plane + chunk) * 2;
    for (int64_t i = begin; i < end; ++i) {
      const float gx = grid_chunk[2 * i], gy = grid_chunk[2 * i + 1];
      int32_t* t = taps + i * kTapWords;
      float* w = reinterpret_cast<float*>(t);
      if (p.interpolation == GridInterpolation::kBilinear) {
        BilinearTaps(geo, gx, gy, t, w + 4);
      } else if (p.interpolation == GridInterpolation::kNearest) {
        t[0] = NearestTap(geo, gx, gy);
      } else {
        BicubicTaps(geo, gx, gy, t, t + 4, w + 8, w + 12);
      }
    }
  };
  // 2. Interpolation of one channel plane at a run of those taps.
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    const float* plane = input + (n * channels + c) * in_plane;
    float* out = output + (n * channels + c) * out_plane + chunk;
    if (p.interpolation == GridInterpolation::kBilinear) {
      for (int64_t i = begin; i < end; ++i) {
        const int32_t* o = taps + i * kTapWords;
        const float* w = reinterpret_cast<const float*>(o) + 4;
        // ATen's order: (nw_val * nw) + (ne_val * ne) + (sw_val * sw) + (se_val * se).
        out[i] = Read(plane, o[0]) * w[0] + Read(plane, o[1]) * w[1] + Read(plane, o[2]) * w[2] +
                 Read(plane, o[3]) * w[3];
      }
    } else if (p.interpolation == GridInterpolation::kNearest) {
      for (int64_t i = begin; i < end; ++i) out[i] = Read(plane, taps[i * kTapWords]);
    } else {
      for (int64_t i = begin; i < end; ++i) {
        const int32_t* cols = taps + i * kTapWords;
        const int32_t* rows = cols + 4;
        const float* wx = reinterpret_cast<const float*>(cols) + 8;
        const float* wy = wx + 4;
        // Interpolate along x within each of the 4 rows, then along y (ATen's order).
        float row_values[4];
        for (int k = 0; k < 4; ++k) {
          const int32_t r = rows[k];
          float v[4];
          for (int j = 0; j < 4; ++j) v[j] = (r >= 0 && cols[j] >= 0) ? plane[r + cols[j]] : 0.0f;
          row_values[k] = v[0] * wx[0] + v[1] * wx[1] + v[2] * wx[2] + v[3] * wx[3];
        }
        out[i] = row_values[0] * wy[0] + row_values[1] * wy[1] + row_values[2] * wy[2] +
                 row_values[3] * wy[3];
      }
    }
  };
  return ForEachPixelChunk(runner, batch, channels, out_plane, {kChunkPixels, kTapBlock, kRunPixels}, prepare, apply);
}

}  // namespace opbridge::cpu
