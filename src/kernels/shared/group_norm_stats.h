// Group normalization's statistics and affine pass as host-and-device functions (instance
// normalization is the case G = C): the CPU kernel (kernels/cpu/group_norm.cc, whose comment has
// the method and its accuracy) and the CUDA kernel (kernels/cuda/group_norm.cu) add the same
// float64 numbers in the same order, so their outputs are identical bit for bit.
//
// A block (one group of one sample) is summed in chunks of kNormChunk values. Element i of a chunk
// goes to lane i % kNormLanes, each lane adds its elements in order (kNormChunk / kNormLanes = 32 of
// them in a full chunk), the lanes are combined by a pairwise tree (SumLanes), and the chunks' sums
// are added in chunk order. The shape is the GPU's: a warp's 32 threads take a chunk's 32 lanes,
// reading 128 contiguous bytes per step, and one of them combines the lanes; the CPU takes the lanes
// 8 at a time in one vector. A block of n values is n / 1024 chunks: 8,192 warps for the
// [8, 64, 128, 128] workload, enough to fill every SM.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/half_storage.h"
#include "core/host_device.h"

namespace opbridge::shared {

constexpr int kNormLanes = 32;     // partial sums per chunk: a warp
constexpr int64_t kNormChunk = 1024;  // values per chunk: 32 per lane

struct Moments {
  double sum = 0.0;     // of x - shift
  double sum_sq = 0.0;  // of (x - shift)^2
};

// Lane `lane`'s sums over x[0, count) of a chunk (count <= kNormChunk): elements lane, lane +
// kNormLanes, ... in order. T: the storage type (float, Float16 or BFloat16), read as the floats it
// holds, here and below.
template <class T>
OPBRIDGE_HD inline Moments LaneMoments(const T* x, int64_t count, double shift, int lane) {
  Moments m;
  for (int64_t i = lane; i < count; i += kNormLanes) {
    const double d = static_cast<double>(Load(x + i)) - shift;
    m.sum += d;
    m.sum_sq += d * d;
  }
  return m;
}

// One level of the pairwise tree over lanes v[0 .. kNormLanes), for lane `lane`: a lane that leads
// a pair at this stride adds its partner into itself. Within a level no lane reads what another
// writes, so a warp runs a level's lanes at once (a __syncwarp between levels).
OPBRIDGE_HD inline void SumLanesStep(double* v, int lane, int stride) {
  if (lane % (2 * stride) == 0) v[lane] = v[lane] + v[lane + stride];
}

// The lanes of a chunk combined by the pairwise tree: v[i] + v[i + 1] for even i, then those pairs
// two by two, ...: ((l0 + l1) + (l2 + l3)) + ...
OPBRIDGE_HD inline double SumLanes(const double lanes[kNormLanes]) {
  double v[kNormLanes];
  for (int i = 0; i < kNormLanes; ++i) v[i] = lanes[i];
  for (int stride = 1; stride < kNormLanes; stride *= 2) {
    // The lanes that lead a pair at this stride (for the others the step does nothing).
    for (int lane = 0; lane < kNormLanes; lane += 2 * stride) SumLanesStep(v, lane, stride);
  }
  return v[0];
}

struct BlockStats {
  float mean;       // the mean rounded to float32
  double residual;  // mean - (its float32 rounding)
  double inv_std;   // 1 / sqrt(var + epsilon)
};

// A block's statistics from its sums over `count` values shifted by `shift` (its first value).
OPBRIDGE_HD inline BlockStats StatsOf(const Moments& m, int64_t count, double shift, float epsilon) {
  const double n = static_cast<double>(count);
  const double mean_shifted = m.sum / n;
  double var = m.sum_sq / n - mean_shifted * mean_shifted;
  if (var < 0.0) var = 0.0;  // rounding can take a zero variance below 0 (NaN stays NaN)
  const double mean = shift + mean_shifted;
  BlockStats s;
  s.mean = static_cast<float>(mean);
  s.residual = mean - static_cast<double>(s.mean);
  s.inv_std = 1.0 / sqrt(var + static_cast<double>(epsilon));
  return s;
}

// A block's running total: its chunks' moments are added in chunk order.
OPBRIDGE_HD inline void AddChunk(const Moments& chunk, Moments* total) {
  total->sum += chunk.sum;
  total->sum_sq += chunk.sum_sq;
}

// A block's statistics from its chunks' moments (chunk_moments[0 .. chunks)).
OPBRIDGE_HD inline BlockStats BlockStatsOf(const Moments* chunk_moments, int64_t chunks, int64_t count, double shift,
                                           float epsilon) {
  Moments total;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) AddChunk(chunk_moments[chunk], &total);
  return StatsOf(total, count, shift, epsilon);
}

// Channel c's y = (x - mean) * a + b: mean = the block's mean in float32, a = scale[c] / sqrt(var +
// epsilon), b = bias[c] - (the block's exact mean - mean) * a (scale, bias: nullptr for 1 and 0).
// Computed once per (sample, channel), in float64.
struct ChannelNorm {
  float mean, a, b;
};
template <class T>
OPBRIDGE_HD inline ChannelNorm ChannelNormOf(const BlockStats& s, const T* scale, const T* bias, int64_t c) {
  const double a = (scale ? static_cast<double>(Load(scale + c)) : 1.0) * s.inv_std;
  const float a32 = static_cast<float>(a);
  const float b32 = static_cast<float>((bias ? static_cast<double>(Load(bias + c)) : 0.0) - s.residual * static_cast<double>(a32));
  return {s.mean, a32, b32};
}

OPBRIDGE_HD inline float NormalizeValue(float x, const ChannelNorm& n) { return (x - n.mean) * n.a + n.b; }

// ---- The CUDA kernel's steps, per thread (the CPU tests run them too) ----------------------------
// Blocks are [blocks][block_size] values: block = sample * G + group, block_size = C / G * spatial,
// each `chunks` chunks long; chunk k of the whole input is chunk k % chunks of block k / chunks.

// Step 1, lane `lane` of chunk `chunk`: its sums, shifted by its block's first value.
template <class T>
OPBRIDGE_HD inline Moments GroupNormLaneStep(const T* input, int64_t block_size, int64_t chunks, int64_t chunk,
                                             int lane) {
  const int64_t block = chunk / chunks, begin = (chunk % chunks) * kNormChunk;
  const T* x = input + block * block_size;
  return LaneMoments(x + begin, Min(kNormChunk, block_size - begin), static_cast<double>(Load(x)), lane);
}

// Step 2, block `block` (sample * groups + g), by a warp in the CUDA kernel: the warp's lanes read its
// chunks' moments (step 1's lanes combined, chunk_moments[block * chunks ...]) 32 at a time and its
// first lane adds them in chunk order (AddChunk); then GroupNormBlockStats; then lane k writes the
// ChannelNorm of the group's channels k, k + 32, ... (GroupNormChannelStep).
template <class T>
OPBRIDGE_HD inline BlockStats GroupNormBlockStats(const Moments& total, const T* input, int64_t block_size,
                                                  float epsilon, int64_t block) {
  return StatsOf(total, block_size, static_cast<double>(Load(input + block * block_size)), epsilon);
}

// Channel k of block `block`: its ChannelNorm to norms[sample * C + c]. Blocks are numbered
// sample-major, so that is block * channels_per_group + k, c = g * channels_per_group + k.
template <class T>
OPBRIDGE_HD inline void GroupNormChannelStep(const BlockStats& s, int64_t groups, int64_t channels_per_group,
                                             const T* scale, const T* bias, int64_t block, int64_t k,
                                             ChannelNorm* norms) {
  norms[block * channels_per_group + k] = ChannelNormOf(s, scale, bias, (block % groups) * channels_per_group + k);
}

// Step 3, thread `index` of the output [N, C, spatial]: its value from its (sample, channel)'s norm,
// in float32 (for the caller to store, rounding it once to the storage type).
template <class Index, class T>
OPBRIDGE_HD inline float GroupNormValueStep(const T* input, Index spatial, const ChannelNorm* norms, Index index) {
  return NormalizeValue(Load(input + index), norms[index / spatial]);
}

}  // namespace opbridge::shared
