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
//    chunk in lane i % kLanes) over fixed chunks of kChunk values, combined by a fixed tree, and
//    the chunks in order (kernels/shared/group_norm_stats.h, where the CUDA kernel's warps take the
//    lanes), so the result is the same whatever the vector width of the CPU level (RunAtCpuLevel
//    below), whichever tasks computed the chunks, and on the GPU.
// 2. Normalize and affine, one fused pass: y = (x - m) * a + b with m = mean rounded to float32,
//    a = scale[c] / sqrt(var + epsilon) and b = bias[c] - (mean - m) * a. x - m is exact when x
//    lies within a factor 2 of m (Sterbenz), which is where cancellation would hurt (values on a
//    large mean); the part of the mean float32 cannot hold goes into b.
//
// Threads: one task per group of whole blocks when there are enough blocks (a block usually
// fits in L2, so pass 2 reads it from cache), else one task per chunk of a block in each pass.
// Either way every output is written by exactly one task from the same sums in the same order,
// so results are identical for any thread count.
//
// Half storage (float16, bfloat16 input, scale, bias and output): pass 1 converts each chunk of a
// block to float32 as it reads it (into a kChunk-value buffer on the stack, which the float32 code
// then sums), pass 2 converts each value in its loop and rounds each output once as it writes it:
// the float32 kernel's outputs on the half values, rounded once. Both conversions run with the CPU
// level's vectors (RunAtCpuLevel).
#include "kernels/cpu/group_norm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_level.h"
#include "kernels/shared/group_norm_stats.h"

namespace opbridge::cpu {
namespace {

constexpr int64_t kChunk = shared::kNormChunk;
constexpr int kLanes = shared::kNormLanes;
constexpr int kVector = 8;                // lanes per vector below
constexpr int64_t kMinBlockTasks = 32;    // fewer blocks than this: parallel over chunks
constexpr int64_t kTaskValues = 1 << 16;  // small blocks are grouped into tasks of about this many values
constexpr int64_t kTaskChunks = 16;       // chunks per task when a block's chunks run in parallel

using shared::BlockStats;
using shared::Moments;

// kVector values as one vector (GCC's vector extensions: lowered to 4 SSE, 2 AVX2 or 1 AVX-512
// registers, lane by lane, so every CPU level adds the same numbers in the same order).
typedef float Floats __attribute__((vector_size(kVector * sizeof(float))));
typedef double Doubles __attribute__((vector_size(kVector * sizeof(double))));

typedef int64_t Lanes __attribute__((vector_size(kVector * sizeof(int64_t))));  // shuffle masks

// shared::SumLanes's pairwise tree over kLanes lanes held kVector to a vector (v[g] has lanes
// 8g .. 8g + 7): levels 1 to 3 inside each vector (lane i + lane i ^ 1, then i ^ 2, then i ^ 4: lane 0
// gets ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))), levels 4 and 5 across them. The same
// additions in the same order as the shared function (the DeviceCode test compares the bits), without
// storing the lanes.
__attribute__((always_inline)) inline double SumLaneVectors(const Doubles v[kLanes / kVector]) {
  double roots[kLanes / kVector];
  for (int g = 0; g < kLanes / kVector; ++g) {
    Doubles t = v[g] + __builtin_shuffle(v[g], Lanes{1, 0, 3, 2, 5, 4, 7, 6});
    t = t + __builtin_shuffle(t, Lanes{2, 3, 0, 1, 6, 7, 4, 5});
    t = t + __builtin_shuffle(t, Lanes{4, 5, 6, 7, 0, 1, 2, 3});
    roots[g] = t[0];
  }
  static_assert(kLanes / kVector == 4, "levels 4 and 5 pair the four vectors' roots");
  return (roots[0] + roots[1]) + (roots[2] + roots[3]);
}

// The moments of a chunk x[0, count) (count <= kChunk), shifted by `shift`, in float64: element i
// goes to lane i % kLanes (shared::LaneMoments' order), the lanes are combined by shared::SumLanes's
// tree (SumLaneVectors). The lanes are taken 2 * kVector at a time, two vector accumulators each for
// the sum and the sum of squares: two independent chains of additions hide their latency (one took
// 17% longer on AVX-512), and more would not fit AVX2's 16 registers.
struct ChunkMomentsBody {
  static constexpr const char* kName = "GroupNorm: ChunkMoments";
  OPBRIDGE_ALWAYS_INLINE static Moments Run(const float* __restrict x, int64_t count, double shift);
};

OPBRIDGE_ALWAYS_INLINE Moments ChunkMomentsBody::Run(const float* __restrict x, int64_t count, double shift) {
  Doubles sums[kLanes / kVector], squares[kLanes / kVector];
  const int64_t rows = count / kLanes;  // full rows of kLanes values
  const Doubles shifts = Doubles{} + shift;
  for (int group = 0; group < kLanes / kVector; group += 2) {
    Doubles sum0 = {}, sum_sq0 = {}, sum1 = {}, sum_sq1 = {};
    for (int64_t r = 0; r < rows; ++r) {
      Floats values0, values1;
      std::memcpy(&values0, x + r * kLanes + group * kVector, sizeof values0);
      std::memcpy(&values1, x + r * kLanes + (group + 1) * kVector, sizeof values1);
      const Doubles d0 = __builtin_convertvector(values0, Doubles) - shifts;
      const Doubles d1 = __builtin_convertvector(values1, Doubles) - shifts;
      sum0 += d0;
      sum_sq0 += d0 * d0;
      sum1 += d1;
      sum_sq1 += d1 * d1;
    }
    sums[group] = sum0;
    sums[group + 1] = sum1;
    squares[group] = sum_sq0;
    squares[group + 1] = sum_sq1;
  }
  for (int l = 0; rows * kLanes + l < count; ++l) {  // the partial last row
    const double d = static_cast<double>(x[rows * kLanes + l]) - shift;
    sums[l / kVector][l % kVector] += d;
    squares[l / kVector][l % kVector] += d * d;
  }
  return {SumLaneVectors(sums), SumLaneVectors(squares)};
}

// y = (x - mean) * a + b over [0, count), each x converted as it is read and each y rounded once as
// it is stored (T: the storage type), in one loop the level's vectors run. No fused multiply-add
// (-ffp-contract=off): the same bits at every CPU level.
template <class T>
struct NormalizeValuesBody {
  static constexpr const char* kName = "GroupNorm: NormalizeValues";
  OPBRIDGE_ALWAYS_INLINE static void Run(const T* __restrict x, int64_t count, float mean, float a, float b,
                                         T* __restrict y) {
    for (int64_t i = 0; i < count; ++i) shared::Store(y + i, (shared::Load(x + i) - mean) * a + b);
  }
};

// A chunk of half values converted to float32 (shared::LoadRun) with the level's vectors.
template <class T>
struct LoadChunkBody {
  static constexpr const char* kName = "GroupNorm: LoadChunk";
  OPBRIDGE_ALWAYS_INLINE static void Run(const T* __restrict x, int64_t count, float* __restrict values) {
    shared::LoadRun(x, count, values);
  }
};

template <class T>
struct Problem {
  static constexpr bool kFloat = std::is_same_v<T, float>;
  const T* input;
  T* output;
  const T* scale;  // nullptr: 1
  const T* bias;   // nullptr: 0
  float epsilon;
  int64_t groups;
  int64_t channels_per_group;
  int64_t spatial;
  int64_t block_size;  // channels_per_group * spatial
  int64_t chunks;      // statistics chunks per block

  double Shift(int64_t block) const { return static_cast<double>(shared::Load(input + block * block_size)); }

  Moments ChunkOf(int64_t block, int64_t chunk) const {
    const int64_t begin = chunk * kChunk;
    const int64_t count = std::min(kChunk, block_size - begin);
    const T* x = input + block * block_size + begin;
    if constexpr (kFloat) {
      return RunAtCpuLevel<4, ChunkMomentsBody>(x, count, Shift(block));
    } else {
      float values[kChunk];
      RunAtCpuLevel<4, LoadChunkBody<T>>(x, count, values);
      return RunAtCpuLevel<4, ChunkMomentsBody>(values, count, Shift(block));
    }
  }

  // The statistics of `block` from the moments of its chunks, added in chunk order whichever
  // tasks computed them.
  BlockStats Stats(int64_t block, const Moments* chunk_moments) const {
    return shared::BlockStatsOf(chunk_moments, chunks, block_size, Shift(block), epsilon);
  }
  BlockStats Stats(int64_t block) const {
    Moments total;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) shared::AddChunk(ChunkOf(block, chunk), &total);
    return shared::StatsOf(total, block_size, Shift(block), epsilon);
  }

  // Normalizes values [begin, end) of `block`, channel by channel.
  void Normalize(int64_t block, const BlockStats& s, int64_t begin, int64_t end) const {
    const T* x = input + block * block_size;
    T* y = output + block * block_size;
    const int64_t first_channel = (block % groups) * channels_per_group;
    for (int64_t i = begin; i < end;) {
      const int64_t k = i / spatial;
      const int64_t stop = std::min(end, (k + 1) * spatial);
      const int64_t c = first_channel + k;
      const shared::ChannelNorm norm = shared::ChannelNormOf(s, scale, bias, c);
      if (stop - i < 16) {  // short planes (spatial size 1, say): not worth the dispatch
        for (int64_t j = i; j < stop; ++j) shared::Store(y + j, shared::NormalizeValue(shared::Load(x + j), norm));
      } else {
        RunAtCpuLevel<4, NormalizeValuesBody<T>>(x + i, stop - i, norm.mean, norm.a, norm.b, y + i);
      }
      i = stop;
    }
  }
};

}  // namespace

template <class T>
Status GroupNorm(const T* input, const NormLayout& layout, int64_t num_groups, const T* scale, const T* bias,
                 float epsilon, T* output, const TaskRunner& runner) {
  if (layout.batch == 0 || layout.channels == 0 || layout.spatial == 0) return Status::Ok();  // no values
  Problem<T> p;
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
                           p.Normalize(block, p.Stats(block), 0, p.block_size);
                         }
                       });
  }

  // Few large blocks (one image's group, say): runs of kTaskChunks chunks in parallel, statistics
  // first.
  const int64_t num_chunks = blocks * p.chunks;
  const size_t tasks = NumChunks(static_cast<size_t>(num_chunks), static_cast<size_t>(kTaskChunks));
  std::vector<Moments> partial(static_cast<size_t>(num_chunks));
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, tasks, [&](size_t task) {
    const int64_t first = static_cast<int64_t>(task) * kTaskChunks;
    for (int64_t t = first; t < std::min(num_chunks, first + kTaskChunks); ++t) {
      partial[static_cast<size_t>(t)] = p.ChunkOf(t / p.chunks, t % p.chunks);
    }
  }));
  std::vector<BlockStats> stats(static_cast<size_t>(blocks));
  for (int64_t block = 0; block < blocks; ++block) {
    stats[static_cast<size_t>(block)] = p.Stats(block, partial.data() + block * p.chunks);
  }
  return ParallelFor(runner, tasks, [&](size_t task) {
    const int64_t first = static_cast<int64_t>(task) * kTaskChunks;
    for (int64_t t = first; t < std::min(num_chunks, first + kTaskChunks); ++t) {
      const int64_t block = t / p.chunks, begin = (t % p.chunks) * kChunk;
      p.Normalize(block, stats[static_cast<size_t>(block)], begin, std::min(p.block_size, begin + kChunk));
    }
  });
}

#define OPBRIDGE_GROUP_NORM(T)                                                                     \
  template Status GroupNorm<T>(const T*, const NormLayout&, int64_t, const T*, const T*, float, T*, \
                               const TaskRunner&);
OPBRIDGE_GROUP_NORM(float)
OPBRIDGE_GROUP_NORM(shared::Float16)
OPBRIDGE_GROUP_NORM(shared::BFloat16)
#undef OPBRIDGE_GROUP_NORM

}  // namespace opbridge::cpu
