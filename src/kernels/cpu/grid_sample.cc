// Grid sampler CPU kernel.
//
// The semantics are ATen's grid_sampler_2d: unnormalize, then border clipping or reflection,
// then bilinear / nearest (round half to even) / bicubic (A = -0.75) interpolation, where every
// tap outside the input reads 0. The coordinate formulas are those of its vectorized CPU kernel
// (see Unnormalizer in bilinear_taps.h).
//
// Every output element is written by exactly one task, so results do not depend on threads, and
// every path computes each output with the same float operations in the same order (no fused
// multiply-adds), so results do not depend on the CPU level either.
#include "kernels/cpu/grid_sample.h"

#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "kernels/cpu/bilinear_taps.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/pixel_chunks.h"

namespace opbridge::cpu {
namespace {

// Work layout, chosen by measurement inside ORT against ORT's built-in GridSample
// (grid_sample.warp: random grid, 32 channels of 256x256): the taps (plane offsets and weights)
// of a chunk of output pixels are computed once for all channels into scratch memory, then each
// task interpolates one channel plane, which stays in the core's cache, at a run of those taps.
// Interpolating all channels of a small pixel block per task instead (taps on the stack) reads
// 32 planes at random per block and was 1.3-2x slower in all modes. Bilinear sampling that is
// dense enough reads a bordered copy of the plane instead (GridSampleBordered below).
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
  return std::min(LargestFloatAtMost(size - 1), std::max(in, 0.0f));
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
  Geometry(const GridSampleParams& params, int64_t height, int64_t width)
      : p(params), in_h(height), in_w(width), unnormalize_x(width, params.align_corners),
        unnormalize_y(height, params.align_corners), bounds(height, width) {}
  GridSampleParams p;
  int64_t in_h, in_w;
  Unnormalizer unnormalize_x, unnormalize_y;
  GridTapBounds bounds;
};

// The point of grid entry (gx, gy) in input pixels, after the padding rule.
inline float PointX(const Geometry& g, float gx) {
  return PadCoordinate(g.unnormalize_x(gx), g.in_w, g.p.padding, g.p.align_corners);
}
inline float PointY(const Geometry& g, float gy) {
  return PadCoordinate(g.unnormalize_y(gy), g.in_h, g.p.padding, g.p.align_corners);
}

// Bilinear taps of one grid point for sampling the input plane itself: the plane offsets of the 4
// corners (north-west, north-east, south-west, south-east; -1 for a corner outside the input) and
// their weights.
void PlaneBilinearTaps(const Geometry& g, float gx, float gy, int32_t offs[4], float w[4]) {
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

// Reads plane[offset], or 0 for the sentinel offset -1 (a tap outside the input).
inline float Read(const float* plane, int32_t offset) { return offset >= 0 ? plane[offset] : 0.0f; }

// Nearest tap of one grid point: an offset, or -1 when outside (or NaN).
int32_t NearestTap(const Geometry& g, float gx, float gy) {
  const float ix = PointX(g, gx), iy = PointY(g, gy);
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
  const float ix = g.unnormalize_x(gx), iy = g.unnormalize_y(gy);
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

// ---- Bilinear sampling of bordered planes ----------------------------------------------------------
//
// When each task samples at least a quarter as many points as its input plane has pixels (a warp,
// an upsampling), the task first copies the plane into a PaddedImage, with a border of zeros (on
// grid_sample.warp, one point per plane pixel, the copies take 16% of the time): every corner then
// reads the copy without a test, the two corners of a row are adjacent, and the taps need one
// corner index per point instead of four. Measured on grid_sample.warp's bilinear/zeros row (the kernel alone, AMD EPYC, one
// thread): 4.1 ms with the unbordered taps below, 3.3 ms with bordered planes and scalar code
// (x86-64-v2), 2.2 ms with AVX2 gathers of the row pairs (ORT 1.30 GridSample: 4.2-5.5 ms, best
// of 30 runs through ORT). AVX-512 gathers were within 5% of AVX2 on this machine. Sparser
// sampling (a small grid on a large input) keeps the unbordered taps: there the copies would cost
// more than the samples.

// The taps of kLanes consecutive points, as a structure of arrays so that one vector instruction
// handles kLanes (or kLanes / 2) points: 80 bytes per 4 points.
constexpr int kLanes = 16;
struct BorderedTaps {
  int32_t corner[kLanes];     // PaddedImage index of the north-west corner
  float weight[4][kLanes];    // nw, ne, sw, se
};
constexpr int64_t kBorderedChunkPixels = 65536;  // taps of 1.25 MB, computed once for all channels
constexpr int64_t kBorderedTasks = 16;           // per chunk at least, when the channels are fewer
constexpr int64_t kBorderedMinRatio = 4;         // points sampled per task >= plane pixels / this

// The taps of kLanes points from their grid entries (x, y pairs), in steps that vectorize across
// the points, except for the border and reflection rules (kZeros false), which branch.
template <bool kZeros>
__attribute__((always_inline)) inline void BlockTaps(const Geometry& g, const float* entries, BorderedTaps& b) {
  float x[kLanes], y[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    x[lane] = g.unnormalize_x(entries[2 * lane]);
    y[lane] = g.unnormalize_y(entries[2 * lane + 1]);
  }
  if (!kZeros) {
    for (int lane = 0; lane < kLanes; ++lane) {
      x[lane] = PadCoordinate(x[lane], g.in_w, g.p.padding, g.p.align_corners);
      y[lane] = PadCoordinate(y[lane], g.in_h, g.p.padding, g.p.align_corners);
    }
  }
  const auto stride = static_cast<int32_t>(g.in_w + 2);  // PaddedImage's
  for (int lane = 0; lane < kLanes; ++lane) {
    const GridBilinearTap t = GridSampleBilinearTap(x[lane], y[lane], g.bounds);
    b.corner[lane] = (t.y0 + 1) * stride + (t.x0 + 1);  // PaddedImage::Index, < Pixels() <= INT32_MAX
    b.weight[0][lane] = t.nw;
    b.weight[1][lane] = t.ne;
    b.weight[2][lane] = t.sw;
    b.weight[3][lane] = t.se;
  }
}

// Taps of `count` points from the grid entries at `grid`, into count / kLanes blocks, rounded up
// (lanes past `count` get the taps of grid entry (0, 0)). Compiled for three x86-64 levels: with
// zeros padding the coordinate arithmetic vectorizes across points.
template <bool kZeros>
__attribute__((always_inline)) inline void MakeBlocks(const Geometry& g, const float* grid, int64_t count, BorderedTaps* blocks) {
  const int64_t full = count / kLanes;
  for (int64_t k = 0; k < full; ++k) BlockTaps<kZeros>(g, grid + 2 * k * kLanes, blocks[k]);
  if (const int64_t rest = count - full * kLanes; rest > 0) {
    float entries[2 * kLanes] = {};
    std::memcpy(entries, grid + 2 * full * kLanes, static_cast<size_t>(2 * rest) * sizeof(float));
    BlockTaps<kZeros>(g, entries, blocks[full]);
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void MakeBorderedTaps(
    const Geometry& g, const float* grid, int64_t count, BorderedTaps* blocks) {
  if (g.p.padding == GridPadding::kZeros) {
    MakeBlocks<true>(g, grid, count, blocks);
  } else {
    MakeBlocks<false>(g, grid, count, blocks);
  }
}

// Copies a height x width plane into a PaddedImage.
void CopyToPadded(const float* plane, int64_t height, int64_t width, float* copy) {
  const PaddedImage padded{height, width};
  std::fill(copy, copy + padded.Index(0, -1), 0.0f);
  for (int64_t y = 0; y < height; ++y) {
    float* row = copy + padded.Index(y, -1);
    row[0] = 0.0f;
    std::memcpy(row + 1, plane + y * width, static_cast<size_t>(width) * sizeof(float));
    row[width + 1] = 0.0f;
  }
  std::fill(copy + padded.Index(height, -1), copy + padded.Pixels(), 0.0f);
}

// out[i] for points [0, count) of `blocks`, from a bordered plane with row stride `stride`:
// ATen's nw * v_nw + ne * v_ne + sw * v_sw + se * v_se, in that order.
inline float SampleBordered(const BorderedTaps& b, int lane, const float* plane, int64_t stride) {
  const float* v = plane + b.corner[lane];
  return v[0] * b.weight[0][lane] + v[1] * b.weight[1][lane] + v[stride] * b.weight[2][lane] +
         v[stride + 1] * b.weight[3][lane];
}

void SampleBorderedBaseline(const BorderedTaps* blocks, int64_t count, const float* plane, int64_t stride,
                            float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = SampleBordered(blocks[i / kLanes], i % kLanes, plane, stride);
}

// Points 0 1 4 5 2 3 6 7 of a vector back in order.
__attribute__((target("avx2"))) inline __m256 InPointOrder(__m256 v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8));
}

// The float pairs at row[index[k]] (scale 4: the indexes count floats), k = 0..3. The masked form
// with every lane on: the unmasked one leaves GCC 12 warning about its undefined source operand.
__attribute__((target("avx2"))) inline __m256 GatherPairs(const double* row, __m128i index) {
  const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  return _mm256_castpd_ps(_mm256_mask_i32gather_pd(_mm256_setzero_pd(), row, index, all, 4));
}

// x86-64-v3: each row's two corners are one 64-bit gather element; 8 points per step.
__attribute__((target("avx2"))) void SampleBorderedAvx2(const BorderedTaps* blocks, int64_t count,
                                                        const float* plane, int64_t stride, float* out) {
  const auto* north = reinterpret_cast<const double*>(plane);
  const auto* south = reinterpret_cast<const double*>(plane + stride);
  const int64_t full = count / 8;
  for (int64_t step = 0; step < full; ++step) {
    const BorderedTaps& b = blocks[step / 2];
    const int lane = static_cast<int>(step % 2) * 8;
    const __m256i corner = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.corner + lane));
    const __m128i low = _mm256_castsi256_si128(corner), high = _mm256_extracti128_si256(corner, 1);
    // Pairs (west, east) of points 0-3 and 4-7 of each row.
    const __m256 n0 = GatherPairs(north, low), n1 = GatherPairs(north, high);
    const __m256 s0 = GatherPairs(south, low), s1 = GatherPairs(south, high);
    // Split the pairs: shuffle_ps gives points 0 1 4 5 2 3 6 7.
    const __m256 nw = InPointOrder(_mm256_shuffle_ps(n0, n1, 0x88));
    const __m256 ne = InPointOrder(_mm256_shuffle_ps(n0, n1, 0xDD));
    const __m256 sw = InPointOrder(_mm256_shuffle_ps(s0, s1, 0x88));
    const __m256 se = InPointOrder(_mm256_shuffle_ps(s0, s1, 0xDD));
    __m256 sum = _mm256_mul_ps(nw, _mm256_loadu_ps(b.weight[0] + lane));
    sum = _mm256_add_ps(sum, _mm256_mul_ps(ne, _mm256_loadu_ps(b.weight[1] + lane)));
    sum = _mm256_add_ps(sum, _mm256_mul_ps(sw, _mm256_loadu_ps(b.weight[2] + lane)));
    sum = _mm256_add_ps(sum, _mm256_mul_ps(se, _mm256_loadu_ps(b.weight[3] + lane)));
    _mm256_storeu_ps(out + step * 8, sum);
  }
  for (int64_t i = full * 8; i < count; ++i) out[i] = SampleBordered(blocks[i / kLanes], i % kLanes, plane, stride);
}

using BorderedSampler = void (*)(const BorderedTaps*, int64_t, const float*, int64_t, float*);

BorderedSampler BorderedSamplerForThisCpu() {
  static const BorderedSampler best = X86_64Level() >= 3 ? SampleBorderedAvx2 : SampleBorderedBaseline;
  return best;
}

// Bilinear interpolation through bordered planes (see above), or false when the sampling is too
// sparse for the copies to pay, or the bordered plane would not fit 32-bit indices.
bool UseBorderedPlanes(int64_t channels, int64_t in_h, int64_t in_w, int64_t out_plane) {
  const PaddedImage padded{in_h, in_w};
  if (padded.Pixels() > INT32_MAX) return false;
  const int64_t chunk = std::min(out_plane, kBorderedChunkPixels);
  const int64_t runs = NumChunks(static_cast<size_t>(kBorderedTasks), static_cast<size_t>(channels));
  return chunk / runs * kBorderedMinRatio >= in_h * in_w;
}

Status GridSampleBordered(const Geometry& geo, const float* input, int64_t batch, int64_t channels,
                          const float* grid, int64_t out_plane, float* output, BorderedTaps* blocks,
                          const TaskRunner& runner) {
  const PaddedImage padded{geo.in_h, geo.in_w};
  const int64_t in_plane = geo.in_h * geo.in_w;
  const int64_t chunk_pixels = std::min(out_plane, kBorderedChunkPixels);
  // Runs of whole blocks, so that each task's taps start a block.
  const int64_t runs = NumChunks(static_cast<size_t>(kBorderedTasks), static_cast<size_t>(channels));
  const int64_t run_pixels = NumChunks(NumChunks(chunk_pixels, runs), kLanes) * kLanes;
  const BorderedSampler sample = BorderedSamplerForThisCpu();
  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    MakeBorderedTaps(geo, grid + (n * out_plane + chunk + begin) * 2, end - begin, blocks + begin / kLanes);
  };
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    std::unique_ptr<float[]> plane(new float[padded.Pixels()]);  // std::bad_alloc: ParallelFor reports it
    CopyToPadded(input + (n * channels + c) * in_plane, geo.in_h, geo.in_w, plane.get());
    sample(blocks + begin / kLanes, end - begin, plane.get(), padded.Stride(),
           output + (n * channels + c) * out_plane + chunk + begin);
  };
  return ForEachPixelChunk(runner, batch, channels, out_plane, {chunk_pixels, kTapBlock, run_pixels}, prepare,
                           apply);
}

}  // namespace

size_t GridSampleScratchBytes() {
  return std::max(static_cast<size_t>(kChunkPixels * kMaxTapWords) * 4,
                  static_cast<size_t>(kBorderedChunkPixels / kLanes) * sizeof(BorderedTaps));
}

Status GridSample(const GridSampleParams& p, const float* input, int64_t batch, int64_t channels,
                  int64_t in_h, int64_t in_w, const float* grid, int64_t out_h, int64_t out_w,
                  float* output, void* scratch, const TaskRunner& runner) {
  const int64_t out_plane = out_h * out_w;
  const int64_t in_plane = in_h * in_w;
  if (in_plane > INT32_MAX) {
    return Status::Error("input planes of more than 2^31 - 1 elements are not supported, got ",
                         in_h, "x", in_w);
  }
  const Geometry geo(p, in_h, in_w);
  if (p.interpolation == GridInterpolation::kBilinear && UseBorderedPlanes(channels, in_h, in_w, out_plane)) {
    return GridSampleBordered(geo, input, batch, channels, grid, out_plane, output,
                              static_cast<BorderedTaps*>(scratch), runner);
  }
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
        PlaneBilinearTaps(geo, gx, gy, t, w + 4);
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
