// Grid sampler CPU kernel.
//
// The coordinate arithmetic is ATen's grid_sampler_2d (aten/src/ATen/native/GridSampler.h):
// unnormalize, then border clipping or reflection, then bilinear / nearest (round half to
// even) / bicubic (A = -0.75) interpolation, where every tap outside the input reads 0.
//
// Layout of the work: the output pixels of one image are cut into blocks of kBlock pixels, one
// task per block. A task first turns the block's grid points into tap offsets and weights (the
// same for every channel), then walks the channels, so each channel plane is read in a small
// window and each output row is written contiguously.
#include "kernels/cpu/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opbridge::cpu {
namespace {

constexpr int64_t kBlock = 256;

// The coordinate formulas are those of ATen's vectorized CPU kernel (ComputeLocationBase in
// aten/src/ATen/native/cpu/GridSamplerKernel.cpp), which is what F.grid_sample runs on the CPU
// for 4-D float input; its scalar twin in GridSampler.h rounds differently in the last bit.
float Unnormalize(float coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1.0f) * (static_cast<float>(size - 1) / 2.0f)
                       : (coord + 1.0f) * (static_cast<float>(size) / 2.0f) - 0.5f;
}

// Clamps to [0, size - 1]; NaN becomes 0, as in ATen.
float ClipCoordinate(float in, int64_t size) {
  if (std::isnan(in)) return 0.0f;
  return std::min(static_cast<float>(size - 1), std::max(in, 0.0f));
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

bool InBounds(int64_t i, int64_t size) { return i >= 0 && i < size; }

// Reads plane[offset], or 0 for the sentinel offset -1 (a tap outside the input).
inline float Read(const float* plane, int64_t offset) { return offset >= 0 ? plane[offset] : 0.0f; }

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

// Bilinear taps of one grid point: 4 offsets (-1 when outside) and 4 weights.
void BilinearTaps(const Geometry& g, float gx, float gy, int64_t offs[4], float w[4]) {
  const float ix = PadCoordinate(Unnormalize(gx, g.in_w, g.p.align_corners), g.in_w, g.p.padding,
                                 g.p.align_corners);
  const float iy = PadCoordinate(Unnormalize(gy, g.in_h, g.p.align_corners), g.in_h, g.p.padding,
                                 g.p.align_corners);
  const float fx = std::floor(ix), fy = std::floor(iy);
  const float west = ix - fx, east = 1.0f - west;    // distances to the west and east sides
  const float north = iy - fy, south = 1.0f - north;  // distances to the north and south sides
  w[0] = south * east;  // north-west corner
  w[1] = south * west;  // north-east
  w[2] = north * east;  // south-west
  w[3] = north * west;  // south-east
  // Only corners with x0 in [-1, W-1] and y0 in [-1, H-1] can touch the input. Checking in
  // float first also keeps NaN and huge coordinates away from the (undefined) integer cast;
  // their weights stay NaN or finite as ATen computes them, and all their taps read 0.
  if (!(fx >= -1.0f && fx <= static_cast<float>(g.in_w - 1) && fy >= -1.0f &&
        fy <= static_cast<float>(g.in_h - 1))) {
    for (int k = 0; k < 4; ++k) offs[k] = -1;
    return;
  }
  const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
  const int64_t xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
  for (int k = 0; k < 4; ++k) {
    offs[k] = (InBounds(xs[k], g.in_w) && InBounds(ys[k], g.in_h)) ? ys[k] * g.in_w + xs[k] : -1;
  }
}

// Nearest tap of one grid point: an offset, or -1 when outside (or NaN).
int64_t NearestTap(const Geometry& g, float gx, float gy) {
  const float ix = PadCoordinate(Unnormalize(gx, g.in_w, g.p.align_corners), g.in_w, g.p.padding,
                                 g.p.align_corners);
  const float iy = PadCoordinate(Unnormalize(gy, g.in_h, g.p.align_corners), g.in_h, g.p.padding,
                                 g.p.align_corners);
  // nearbyint rounds half to even under the default rounding mode, like ATen's CPU kernel.
  const float rx = std::nearbyint(ix), ry = std::nearbyint(iy);
  if (!(rx >= 0.0f && rx < static_cast<float>(g.in_w) && ry >= 0.0f &&
        ry < static_cast<float>(g.in_h))) {
    return -1;
  }
  return static_cast<int64_t>(ry) * g.in_w + static_cast<int64_t>(rx);
}

// Bicubic taps of one grid point: 4 column offsets, 4 row offsets (-1 when outside) and the
// separable weights. ATen pads each of the 16 integer tap coordinates, not the sample point.
void BicubicTaps(const Geometry& g, float gx, float gy, int64_t cols[4], int64_t rows[4],
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
    // Coordinates far outside cannot be converted to int64 safely; they are outside anyway.
    if (cx >= 0.0f && cx < static_cast<float>(g.in_w)) cols[k] = static_cast<int64_t>(cx);
    if (cy >= 0.0f && cy < static_cast<float>(g.in_h)) rows[k] = static_cast<int64_t>(cy) * g.in_w;
  }
}

}  // namespace

Status GridSample(const GridSampleParams& p, const float* input, int64_t batch, int64_t channels,
                  int64_t in_h, int64_t in_w, const float* grid, int64_t out_h, int64_t out_w,
                  float* output, const TaskRunner& runner) {
  const int64_t out_plane = out_h * out_w;
  const int64_t in_plane = in_h * in_w;
  const int64_t blocks_per_image = static_cast<int64_t>(NumChunks(out_plane, kBlock));
  const Geometry geo{p, in_h, in_w};

  return ParallelFor(runner, static_cast<size_t>(batch * blocks_per_image), [&](size_t task) {
    const int64_t n = static_cast<int64_t>(task) / blocks_per_image;
    const int64_t begin = (static_cast<int64_t>(task) % blocks_per_image) * kBlock;
    const int64_t len = std::min(kBlock, out_plane - begin);
    const float* grid_block = grid + (n * out_plane + begin) * 2;
    const float* in_n = input + n * channels * in_plane;
    float* out_n = output + n * channels * out_plane + begin;

    if (p.interpolation == GridInterpolation::kBilinear) {
      int64_t offs[kBlock][4];
      float w[kBlock][4];
      for (int64_t i = 0; i < len; ++i) {
        BilinearTaps(geo, grid_block[2 * i], grid_block[2 * i + 1], offs[i], w[i]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane = in_n + c * in_plane;
        float* out = out_n + c * out_plane;
        for (int64_t i = 0; i < len; ++i) {
          out[i] = Read(plane, offs[i][0]) * w[i][0] + Read(plane, offs[i][1]) * w[i][1] +
                   Read(plane, offs[i][2]) * w[i][2] + Read(plane, offs[i][3]) * w[i][3];
        }
      }
    } else if (p.interpolation == GridInterpolation::kNearest) {
      int64_t offs[kBlock];
      for (int64_t i = 0; i < len; ++i) {
        offs[i] = NearestTap(geo, grid_block[2 * i], grid_block[2 * i + 1]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane = in_n + c * in_plane;
        float* out = out_n + c * out_plane;
        for (int64_t i = 0; i < len; ++i) out[i] = Read(plane, offs[i]);
      }
    } else {
      int64_t cols[kBlock][4], rows[kBlock][4];
      float wx[kBlock][4], wy[kBlock][4];
      for (int64_t i = 0; i < len; ++i) {
        BicubicTaps(geo, grid_block[2 * i], grid_block[2 * i + 1], cols[i], rows[i], wx[i], wy[i]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane = in_n + c * in_plane;
        float* out = out_n + c * out_plane;
        for (int64_t i = 0; i < len; ++i) {
          // Interpolate along x within each of the 4 rows, then along y (ATen's order).
          float row_values[4];
          for (int k = 0; k < 4; ++k) {
            const int64_t r = rows[i][k];
            float v[4];
            for (int j = 0; j < 4; ++j) {
              v[j] = (r >= 0 && cols[i][j] >= 0) ? plane[r + cols[i][j]] : 0.0f;
            }
            row_values[k] = v[0] * wx[i][0] + v[1] * wx[i][1] + v[2] * wx[i][2] + v[3] * wx[i][3];
          }
          out[i] = row_values[0] * wy[i][0] + row_values[1] * wy[i][1] +
                   row_values[2] * wy[i][2] + row_values[3] * wy[i][3];
        }
      }
    }
  });
}

}  // namespace opbridge::cpu
