// Grid sampler CPU kernel.
//
// The semantics are ATen's grid_sampler_2d: unnormalize, then border clipping or reflection,
// then bilinear / nearest (round half to even) / bicubic (A = -0.75) interpolation, where every
// tap outside the input reads 0. The coordinate formulas are those of its vectorized CPU kernel
// (kernels/shared/grid_sample_taps.h, shared with the CUDA kernel).
//
// Every output element is written by exactly one task, so results do not depend on threads, and
// every path computes each output with the same float operations in the same order (no fused
// multiply-adds), so results do not depend on the CPU level either.
#include "kernels/cpu/grid_sample.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "kernels/cpu/bilinear_taps.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/pixel_chunks.h"
#include "kernels/shared/grid_sample_3d.h"
#include "kernels/shared/grid_sample_taps.h"

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

using shared::BicubicTaps;
using shared::GridGeometry;
using shared::NearestTap;
using shared::PadCoordinate;
using shared::PlaneBilinearTaps;
using shared::Read;
using Geometry = GridGeometry;

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

struct MakeBorderedTapsBody {
  static constexpr const char* kName = "GridSample: MakeBorderedTaps";
  OPBRIDGE_ALWAYS_INLINE static void Run(const Geometry& g, const float* grid, int64_t count, BorderedTaps* blocks);
};

OPBRIDGE_ALWAYS_INLINE void MakeBorderedTapsBody::Run(const Geometry& g, const float* grid, int64_t count,
                                                      BorderedTaps* blocks) {
  if (g.p.padding == GridPadding::kZeros) {
    MakeBlocks<true>(g, grid, count, blocks);
  } else {
    MakeBlocks<false>(g, grid, count, blocks);
  }
}

// Copies a height x width plane into a PaddedImage (converting half storage to float32 as it reads).
template <class T>
void CopyToPadded(const T* plane, int64_t height, int64_t width, float* copy) {
  const PaddedImage padded{height, width};
  std::fill(copy, copy + padded.Index(0, -1), 0.0f);
  for (int64_t y = 0; y < height; ++y) {
    float* row = copy + padded.Index(y, -1);
    row[0] = 0.0f;
    shared::LoadRun(plane + y * width, width, row + 1);
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

#if defined(__x86_64__)
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
#endif  // __x86_64__

using BorderedSampler = void (*)(const BorderedTaps*, int64_t, const float*, int64_t, float*);

BorderedSampler BorderedSamplerForThisCpu() {
  static DispatchRecord record("GridSample: SampleBordered");
  NoteLevel(record, LevelUpTo<3>());
#if defined(__x86_64__)
  static const BorderedSampler best = X86_64Level() >= 3 ? SampleBorderedAvx2 : SampleBorderedBaseline;
  return best;
#else  // aarch64 has no gather: the plain loop (the same sums in the same order)
  return SampleBorderedBaseline;
#endif
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

// The grid entries [0, count) at `grid` as floats: the entries themselves, or for half storage
// converted into `buffer` (a tap block's, as they are read).
inline const float* GridEntries(const float* grid, int64_t, float*) { return grid; }
template <class T>
const float* GridEntries(const T* grid, int64_t count, float* buffer) {
  shared::LoadRun(grid, count, buffer);
  return buffer;
}

// out[i] = value(i) for i in [begin, end): float32 values stored as they come, or for half storage
// a block at a time through a float32 buffer, whose rounding loop vectorizes.
template <class T, class Value>
inline void StoreValues(T* out, int64_t begin, int64_t end, const Value& value) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t i = begin; i < end; ++i) out[i] = value(i);
  } else {
    constexpr int64_t kBlock = 256;
    float values[kBlock];
    for (int64_t first = begin; first < end; first += kBlock) {
      const int64_t count = std::min(kBlock, end - first);
      for (int64_t k = 0; k < count; ++k) values[k] = value(first + k);
      shared::StoreRun(values, count, out + first);
    }
  }
}

template <class T>
Status GridSampleBordered(const Geometry& geo, const T* input, int64_t batch, int64_t channels,
                          const T* grid, int64_t out_plane, T* output, BorderedTaps* blocks,
                          const TaskRunner& runner) {
  const PaddedImage padded{geo.in_h, geo.in_w};
  const int64_t in_plane = geo.in_h * geo.in_w;
  const int64_t chunk_pixels = std::min(out_plane, kBorderedChunkPixels);
  // Runs of whole blocks, so that each task's taps start a block.
  const int64_t runs = NumChunks(static_cast<size_t>(kBorderedTasks), static_cast<size_t>(channels));
  const int64_t run_pixels = NumChunks(NumChunks(chunk_pixels, runs), kLanes) * kLanes;
  const BorderedSampler sample = BorderedSamplerForThisCpu();
  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    float buffer[2 * kTapBlock];
    RunAtCpuLevel<4, MakeBorderedTapsBody>(
        geo, GridEntries(grid + (n * out_plane + chunk + begin) * 2, 2 * (end - begin), buffer), end - begin,
        blocks + begin / kLanes);
  };
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    std::unique_ptr<float[]> plane(new float[padded.Pixels()]);  // std::bad_alloc: ParallelFor reports it
    CopyToPadded(input + (n * channels + c) * in_plane, geo.in_h, geo.in_w, plane.get());
    T* out = output + (n * channels + c) * out_plane + chunk + begin;
    if constexpr (std::is_same_v<T, float>) {
      sample(blocks + begin / kLanes, end - begin, plane.get(), padded.Stride(), out);
    } else {  // sampled in float32, then rounded once as stored
      std::unique_ptr<float[]> values(new float[end - begin]);
      sample(blocks + begin / kLanes, end - begin, plane.get(), padded.Stride(), values.get());
      shared::StoreRun(values.get(), end - begin, out);
    }
  };
  return ForEachPixelChunk(runner, batch, channels, out_plane, {chunk_pixels, kTapBlock, run_pixels}, prepare,
                           apply);
}

}  // namespace

size_t GridSampleScratchBytes() {
  return std::max(static_cast<size_t>(kChunkPixels * kMaxTapWords) * 4,
                  static_cast<size_t>(kBorderedChunkPixels / kLanes) * sizeof(BorderedTaps));
}

template <class T>
Status GridSample(const GridSampleParams& p, const T* input, int64_t batch, int64_t channels,
                  int64_t in_h, int64_t in_w, const T* grid, int64_t out_h, int64_t out_w,
                  T* output, void* scratch, const TaskRunner& runner) {
  const int64_t out_plane = out_h * out_w;
  const int64_t in_plane = in_h * in_w;
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputPlane(in_h, in_w));
  const Geometry geo(p, in_h, in_w);
  if (p.interpolation == GridInterpolation::kBilinear && UseBorderedPlanes(channels, in_h, in_w, out_plane)) {
    return GridSampleBordered(geo, input, batch, channels, grid, out_plane, output,
                              static_cast<BorderedTaps*>(scratch), runner);
  }
  auto* taps = static_cast<int32_t*>(scratch);
  const int64_t kTapWords = TapWords(p.interpolation);

  // 1. The taps of every pixel of a chunk, computed once for all channels.
  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    float buffer[2 * kTapBlock];
    const float* entries = GridEntries(grid + (n * out_plane + chunk + begin) * 2, 2 * (end - begin), buffer);
    for (int64_t i = begin; i < end; ++i) {
      const float gx = entries[2 * (i - begin)], gy = entries[2 * (i - begin) + 1];
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
    const T* plane = input + (n * channels + c) * in_plane;
    T* out = output + (n * channels + c) * out_plane + chunk;
    if (p.interpolation == GridInterpolation::kBilinear) {
      StoreValues(out, begin, end, [&](int64_t i) {
        const int32_t* o = taps + i * kTapWords;
        return shared::BilinearValue(plane, o, reinterpret_cast<const float*>(o) + 4);
      });
    } else if (p.interpolation == GridInterpolation::kNearest) {
      StoreValues(out, begin, end, [&](int64_t i) { return Read(plane, taps[i * kTapWords]); });
    } else {
      StoreValues(out, begin, end, [&](int64_t i) {
        const int32_t* cols = taps + i * kTapWords;
        const float* wx = reinterpret_cast<const float*>(cols) + 8;
        return shared::BicubicValue(plane, cols, cols + 4, wx, wx + 4);
      });
    }
  };
  return ForEachPixelChunk(runner, batch, channels, out_plane, {kChunkPixels, kTapBlock, kRunPixels}, prepare, apply);
}

template <class T>
Status GridSample3d(const GridSampleParams& p, const T* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const T* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    T* output, void* scratch, const TaskRunner& runner) {
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputVolume(in_d, in_h, in_w));
  if (p.interpolation == GridInterpolation::kBicubic) {
    return Status::Error("bicubic interpolation needs a 4-D input");  // the shape rules say so first
  }
  const int64_t out_volume = out_d * out_h * out_w, in_volume = in_d * in_h * in_w;
  const shared::GridGeometry3d geo{p, in_d, in_h, in_w};
  auto* taps = static_cast<int32_t*>(scratch);
  // 8 offsets and 8 weights per point (trilinear), or 1 offset (nearest): kMaxTapWords at most.
  const int64_t kTapWords = p.interpolation == GridInterpolation::kNearest ? 1 : 16;

  // The same layout as the 4-D sampler: the taps of a chunk of output points once for all
  // channels, then one channel volume at a time at a run of them.
  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    float buffer[3 * kTapBlock];
    const float* entries = GridEntries(grid + (n * out_volume + chunk + begin) * 3, 3 * (end - begin), buffer);
    for (int64_t i = begin; i < end; ++i) {
      const float* g = entries + 3 * (i - begin);
      int32_t* t = taps + i * kTapWords;
      if (p.interpolation == GridInterpolation::kNearest) {
        t[0] = shared::NearestTap3d(geo, g[0], g[1], g[2]);
      } else {
        shared::TrilinearTaps(geo, g[0], g[1], g[2], t, reinterpret_cast<float*>(t) + 8);
      }
    }
  };
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    const T* volume = input + (n * channels + c) * in_volume;
    T* out = output + (n * channels + c) * out_volume + chunk;
    if (p.interpolation == GridInterpolation::kNearest) {
      StoreValues(out, begin, end, [&](int64_t i) { return Read(volume, taps[i]); });
    } else {
      StoreValues(out, begin, end, [&](int64_t i) {
        const int32_t* t = taps + i * kTapWords;
        return shared::TrilinearValue(volume, t, reinterpret_cast<const float*>(t) + 8);
      });
    }
  };
  return ForEachPixelChunk(runner, batch, channels, out_volume, {kChunkPixels, kTapBlock, kRunPixels}, prepare, apply);
}

#define OPBRIDGE_GRID_SAMPLE(T)                                                                                   \
  template Status GridSample<T>(const GridSampleParams&, const T*, int64_t, int64_t, int64_t, int64_t, const T*,      \
                                int64_t, int64_t, T*, void*, const TaskRunner&);                                     \
  template Status GridSample3d<T>(const GridSampleParams&, const T*, int64_t, int64_t, int64_t, int64_t, int64_t,     \
                                  const T*, int64_t, int64_t, int64_t, T*, void*, const TaskRunner&);
OPBRIDGE_GRID_SAMPLE(float)
OPBRIDGE_GRID_SAMPLE(shared::Float16)
OPBRIDGE_GRID_SAMPLE(shared::BFloat16)
#undef OPBRIDGE_GRID_SAMPLE

}  // namespace opbridge::cpu
