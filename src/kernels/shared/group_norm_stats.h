// Group normalization's statistics and affine pass as host-and-device functions (instance
// normalization is the case G = C): the CPU kernel (kernels/cpu/group_norm.cc, whose comment has
// the method and its accuracy) and the CUDA kernel (kernels/cuda/group_norm.cu) add the same
// float64 numbers in the same order, so their outputs are identical bit for bit.
//
// A block (one group of one sample) is summed in chunks of kNormChunk values; element i of a chunk
// goes to lane i % kNormLanes, each lane adds its elements in order, and the lanes are combined
// pairwise (SumLanes); the chunks' sums are added in chunk order.
#pragma once

#include <math.h>
#include <stdint.h>

#include "kernels/shared/host_device.h"

namespace opbridge::shared {

constexpr int64_t kNormChunk = 16384;  // values per statistics chunk (64 KiB)
constexpr int kNormLanes = 8;          // partial sums per chunk

struct Moments {
  double sum = 0.0;     // of x - shift
  double sum_sq = 0.0;  // of (x - shift)^2
};

// Lane `lane`'s sums over x[0, count) of a chunk: elements lane, lane + kNormLanes, ... in order.
OPBRIDGE_HD inline Moments LaneMoments(const float* x, int64_t count, double shift, int lane) {
  Moments m;
  for (int64_t i = lane; i < count; i += kNormLanes) {
    const double d = static_cast<double>(x[i]) - shift;
    m.sum += d;
    m.sum_sq += d * d;
  }
  return m;
}

// The lanes of a chunk combined: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
OPBRIDGE_HD inline double SumLanes(const double v[kNormLanes]) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
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

// Channel c's y = (x - m) * a + b: a = scale[c] / sqrt(var + epsilon), b = bias[c] - (mean - m) * a
// (scale, bias: nullptr for 1 and 0).
struct ChannelAffine {
  float a, b;
};
OPBRIDGE_HD inline ChannelAffine AffineOf(const BlockStats& s, const float* scale, const float* bias, int64_t c) {
  const double a = (scale ? static_cast<double>(scale[c]) : 1.0) * s.inv_std;
  const float a32 = static_cast<float>(a);
  const float b32 = static_cast<float>((bias ? static_cast<double>(bias[c]) : 0.0) - s.residual * static_cast<double>(a32));
  return {a32, b32};
}

OPBRIDGE_HD inline float NormalizeValue(float x, float mean, const ChannelAffine& affine) {
  return (x - mean) * affine.a + affine.b;
}

// ---- The CUDA kernel's three steps, per thread (the CPU tests run them too) -----------------------
// Blocks are [blocks][block_size] values: block = sample * G + group, block_size = C / G * spatial.

// Step 1, thread t of blocks * chunks * kNormLanes: lane t % kNormLanes of chunk t / kNormLanes
// (chunks numbered block by block), shifted by its block's first value.
OPBRIDGE_HD inline Moments GroupNormLaneStep(const float* input, int64_t block_size, int64_t chunks, int64_t t) {
  const int64_t chunk = t / kNormLanes, block = chunk / chunks;
  const int64_t begin = (chunk % chunks) * kNormChunk;
  const float* x = input + block * block_size;
  return LaneMoments(x + begin, Min(kNormChunk, block_size - begin), static_cast<double>(x[0]),
                     static_cast<int>(t % kNormLanes));
}

// Step 2, thread `block`: its statistics from its chunks' lanes (lanes[(block * chunks + chunk) *
// kNormLanes + lane], step 1's results), added in chunk order.
OPBRIDGE_HD inline BlockStats GroupNormStatsStep(const float* input, int64_t block_size, int64_t chunks,
                                                 const Moments* lanes, float epsilon, int64_t block) {
  Moments total;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const Moments* m = lanes + (block * chunks + chunk) * kNormLanes;
    double sum[kNormLanes], sum_sq[kNormLanes];
    for (int l = 0; l < kNormLanes; ++l) {
      sum[l] = m[l].sum;
      sum_sq[l] = m[l].sum_sq;
    }
    total.sum += SumLanes(sum);
    total.sum_sq += SumLanes(sum_sq);
  }
  return StatsOf(total, block_size, static_cast<double>(input[block * block_size]), epsilon);
}

// Step 3, thread `index` of the output [N, C, spatial].
OPBRIDGE_HD inline float GroupNormValueStep(const float* input, int64_t channels, int64_t spatial, int64_t block_size,
                                            const BlockStats* stats, const float* scale, const float* bias,
                                            int64_t index) {
  const BlockStats& s = stats[index / block_size];
  return NormalizeValue(input[index], s.mean, AffineOf(s, scale, bias, (index / spatial) % channels));
}

}  // namespace opbridge::shared
