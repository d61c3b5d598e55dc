// Group normalization CPU kernel (instance normalization is its case G = C).
//
// A "block" is one group of one sample: C / G consecutive channels of `spatial` values, which are
// contiguous in memory. Each block is normalized by its own mean and biased variance in two
// passes over it:
//
// 1. Statistics, one read (kernels/shared/group_norm_stats.h, shared with the CUDA kernel). The values are shifted by the block's first value K and the sums of
//    d = x - K and d^2 are accumulated in float64; then mean = K + sum / n and
//    var = sum_sq / n - (sum / n)^2. Any value of the block satisfies (K - mean)^2 <= n var, so
//    the cancellation in that difference costs at most log2(n) of float64's 53 bits: the variance
//    stays accurate far below float32's resolution even where the naive float32
//    E[x^2] - E[x]^2 loses every digit (values 1e4 + N(0, 1)). float64 also keeps d^2 from
//    overflowing for values up to FLT_MAX. The sums run in kLanes partial sums (element i of a
//    chunk in lane i % kLanes) over fixed chunks of kChunk values, combined in a fixed order, so
//    the result is the same whatever the vector width of the CPU level (target_clones below) and
//    whichever tasks computed the chunks.
// 2. Normalize and affine, one fused pass: y = (x - m) * a + b with m = mean rounded to float32,
//    a = scale[c] / sqrt(var + epsilon) and b = bias[c] - (mean - m) * a. x - m is exact when x
//    lies within a factor 2 of m (Sterbenz), which is where cancellation would hurt (values on a
//    large mean); the part of the mean float32 cannot hold goes into b.
//
// Threads: one task per group of whole blocks when there are enough blocks (a block usually
// fits in L2, so pass 2 reads it from cache), else one task per chunk of a block in each pass.
// Either way every output is written by exactly one task from the same sums in the same order,
// so results are identical for any thread count.
#include "kernels/cpu/group_norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/shared/group_norm_stats.h"

namespace opbridge::cpu {
namespace {

constexpr int64_t kChunk = shared::kNormChunk;
constexpr int kLanes = shared::kNormLanes;
constexpr int64_t kMinBlockTasks = 32;    // fewer blocks than this: parallel over chunks
constexpr int64_t kTaskValues = 1 << 16;  // small blocks are grouped into tasks of about this many values

using shared::BlockStats;
using shared::Moments;

// kLanes values as one vector (GCC's vector extensions: lowered to 4 SSE, 2 AVX2 or 1 AVX-512
// registers, lane by lane, so every CPU level adds the same numbers in the same order).
typedef float Floats __attribute__((vector_size(kLanes * sizeof(float))));
typedef double Doubles __attribute__((vector_size(kLanes * sizeof(double))));

double SumLanes(const Doubles& v) {
  const double lanes[kLanes] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
  return shared::SumLanes(lanes);
}

// The sums of d = x - shift and d^2 over x[0, count), in float64: element i goes to lane
// i % kLanes, and the lanes are added pairwise at the end.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) Moments ChunkMoments(
    const float* __restrict x, int64_t count, double shift) {
  Doubles sum = {}, sum_sq = {};
  const Doubles shifts = Doubles{} + shift;
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    Floats values;
    std::memcpy(&values, x + i, sizeof values);
    const Doubles d = __builtin_convertvector(values, Doubles) - shifts;
    sum += d;
    sum_sq += d * d;
  }
  for (int l = 0; i < count; ++i, ++l) {
    const double d = static_cast<double>(x[i]) - shift;
    sum[l] += d;
    sum_sq[l] += d * d;
  }
  return {SumLanes(sum), SumLanes(sum_sq)};
}

// y = (x - mean) * a + b over [0, count). No fused multiply-add (-ffp-contract=off): the same
// bits at every CPU level.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void NormalizeValues(
    const float* __restrict x, int64_t count, float mean, float a, float b, float* __restrict y) {
  for (int64_t i = 0; i < count; ++i) y[i] = (x[i] - mean) * a + b;
}

struct Problem {
  const float* input;
  float* output;
  const float* scale;  // nullptr: 1
  const float* bias;   // nullptr: 0
  float epsilon;
  int64_t groups;
  int64_t channels_per_group;
  int64_t spatial;
  int64_t block_size;  // channels_per_group * spatial
  int64_t chunks;      // statistics chunks per block

  double Shift(int64_t block) const { return static_cast<double>(input[block * block_size]); }

  Moments ChunkOf(int64_t block, int64_t chunk) const {
    const int64_t begin = chunk * kChunk;
    return ChunkMoments(input + block * block_size + begin, std::min(kChunk, block_size - begin), Shift(block));
  }

  // The statistics of `block` from the moments of its chunks (chunk_moments(chunk)), added in
  // chunk order whichever tasks computed them.
  template <class ChunkMomentsFn>
  BlockStats Stats(int64_t block, ChunkMomentsFn chunk_moments) const {
    Moments total;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const Moments m = chunk_moments(chunk);
      total.sum += m.sum;
      total.sum_sq += m.sum_sq;
    }
    return shared::StatsOf(total, block_size, Shift(block), epsilon);
  }

  // Normalizes values [begin, end) of `block`, channel by channel.
  void Normalize(int64_t block, const BlockStats& s, int64_t begin, int64_t end) const {
    const float* x = input + block * block_size;
    float* y = output + block * block_size;
    const int64_t first_channel = (block % groups) * channels_per_group;
    for (int64_t i = begin; i < end;) {
      const int64_t k = i / spatial;
      const int64_t stop = std::min(end, (k + 1) * spatial);
      const int64_t c = first_channel + k;
      const shared::ChannelAffine affine = shared::AffineOf(s, scale, bias, c);
      if (stop - i < 16) {  // short planes (spatial size 1, say): not worth the dispatch
        for (int64_t j = i; j < stop; ++j) y[j] = shared::NormalizeValue(x[j], s.mean, affine);
      } else {
        NormalizeValues(x + i, stop - i, s.mean, affine.a, affine.b, y + i);
      }
      i = stop;
    }
  }
};

}  // namespace

Status GroupNorm(const float* input, const NormLayout& layout, int64_t num_groups, const float* scale,
                 const float* bias, float epsilon, float* output, const TaskRunner& runner) {
  if (layout.batch == 0 || layout.channels == 0 || layout.spatial == 0) return Status::Ok();  // no values
  Problem p;
  p.input = input;
  p.output = output;
  p.scale = scale;
  p.bias = bias;
  p.epsilon = epsilon;
  p.groups = num_groups;
  p.channels_per_group = layout.channels / num_groups;
  p.spatial = layout.spatial;
  p.block_size = p.channels_per_group * p.spatial;
  p.chunks = static_cast<int64_t>(NumChunks(static_cast<size_t>(p.block_size), kChunk));
  const int64_t blocks = layout.batch * num_groups;

  if (blocks >= kMinBlockTasks || p.chunks == 1) {
    // Whole blocks per task: statistics, then the normalize pass over the block while it is in cache.
    const int64_t blocks_per_task = std::max<int64_t>(1, kTaskValues / p.block_size);
    return ParallelFor(runner, NumChunks(static_cast<size_t>(blocks), static_cast<size_t>(blocks_per_task)),
                       [&](size_t task) {
                         const int64_t first = static_cast<int64_t>(task) * blocks_per_task;
                         const int64_t last = std::min(blocks, first + blocks_per_task);
                         for (int64_t block = first; block < last; ++block) {
                           const BlockStats s = p.Stats(block, [&](int64_t chunk) { return p.ChunkOf(block, chunk); });
                           p.Normalize(block, s, 0, p.block_size);
                         }
                       });
  }

  // Few large blocks (one image's group, say): chunks in parallel, statistics first.
  const size_t num_chunks = static_cast<size_t>(blocks * p.chunks);
  std::vector<Moments> partial(num_chunks);
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, num_chunks, [&](size_t task) {
    const int64_t t = static_cast<int64_t>(task);
    partial[task] = p.ChunkOf(t / p.chunks, t % p.chunks);
  }));
  std::vector<BlockStats> stats(static_cast<size_t>(blocks));
  for (int64_t block = 0; block < blocks; ++block) {
    stats[static_cast<size_t>(block)] =
        p.Stats(block, [&](int64_t chunk) { return partial[static_cast<size_t>(block * p.chunks + chunk)]; });
  }
  return ParallelFor(runner, num_chunks, [&](size_t task) {
    const int64_t t = static_cast<int64_t>(task);
    const int64_t block = t / p.chunks, begin = (t % p.chunks) * kChunk;
    p.Normalize(block, stats[static_cast<size_t>(block)], begin, std::min(p.block_size, begin + kChunk));
  });
}

}  // namespace opbridge::cpu
