// Group normalization kernel tests against closed-form answers and a float64 reference written
// from the formula (two passes: the exact mean first, then the squared deviations). The sweeps
// through ORT, the peers' graphs and the export round trips are in tests/python/test_group_norm.py.
#include "kernels/cpu/group_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "half_values.h"
#include "kernels/shared/group_norm_stats.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Problem {
  NormLayout layout;
  int64_t groups;
  std::vector<float> input;  // [N, C, spatial]
  std::vector<float> scale, bias;  // [C] each; empty: absent
};

Problem RandomProblem(int64_t n, int64_t c, int64_t spatial, int64_t groups, uint32_t seed, double mean = 0.0,
                      bool affine = true) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p{{n, c, spatial}, groups, std::vector<float>(n * c * spatial), {}, {}};
  for (float& v : p.input) v = static_cast<float>(mean + normal(gen));
  if (affine) {
    for (int64_t k = 0; k < c; ++k) {
      p.scale.push_back(normal(gen));
      p.bias.push_back(normal(gen));
    }
  }
  return p;
}

std::vector<float> RunGroupNorm(const Problem& p, float epsilon, const TaskRunner& runner) {
  std::vector<float> out(p.input.size(), -7.0f);
  Status s = cpu::GroupNorm(p.input.data(), p.layout, p.groups, p.scale.empty() ? nullptr : p.scale.data(),
                            p.bias.empty() ? nullptr : p.bias.data(), epsilon, out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c] per (sample, group), in float64.
std::vector<double> Reference(const Problem& p, float epsilon) {
  const int64_t cpg = p.layout.channels / p.groups, block = cpg * p.layout.spatial;
  std::vector<double> out(p.input.size());
  for (int64_t b = 0; b < p.layout.batch * p.groups; ++b) {
    const float* x = p.input.data() + b * block;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < block; ++i) mean += x[i];
    mean /= static_cast<double>(block);
    for (int64_t i = 0; i < block; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(block);
    for (int64_t i = 0; i < block; ++i) {
      const int64_t c = (b % p.groups) * cpg + i / p.layout.spatial;
      const double scale = p.scale.empty() ? 1.0 : p.scale[c], bias = p.bias.empty() ? 0.0 : p.bias[c];
      out[b * block + i] = (x[i] - mean) / std::sqrt(var + static_cast<double>(epsilon)) * scale + bias;
    }
  }
  return out;
}

// The largest |out - expected| / max(1, |expected|) over every value (NaN only where expected is
// NaN): a few float32 ulps of outputs up to ~15 (scale and bias ~ N(0, 1)) are ~1e-6.
double MaxError(const std::vector<float>& out, const std::vector<double>& expected) {
  double worst = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(out[i])) << i;
      continue;
    }
    worst = std::max(worst, std::abs(out[i] - expected[i]) / std::max(1.0, std::abs(expected[i])));
  }
  return worst;
}

TEST(GroupNorm, ClosedForm) {
  // One sample, 2 groups of 2 channels x 2 values: group 0 holds 1, 2, 3, 4 (mean 2.5,
  // var 1.25), group 1 holds 10, 10, 10, 14 (mean 11, var 3).
  Problem p{{1, 4, 2}, 2, {1, 2, 3, 4, 10, 10, 10, 14}, {1, 2, 1, -1}, {0, 0, 5, 0}};
  const auto out = RunGroupNorm(p, 0.0f, SerialTaskRunner());
  const double s0 = 1 / std::sqrt(1.25), s1 = 1 / std::sqrt(3.0);
  const double expected[] = {-1.5 * s0, -0.5 * s0, 2 * 0.5 * s0, 2 * 1.5 * s0, -s1 + 5, -s1 + 5, s1, -3 * s1};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
}

TEST(GroupNorm, MatchesFloat64Reference) {
  struct Case { int64_t n, c, spatial, groups; };
  // Groups 1, C and between; spatial sizes 1 (rank 2), small, and above a statistics chunk
  // (16384 values) with few blocks, which takes the chunked path.
  const Case cases[] = {{2, 6, 7, 1}, {2, 6, 7, 6}, {2, 6, 7, 3}, {3, 8, 1, 4}, {1, 4, 20000, 2}, {2, 64, 64, 32},
                        {1, 3, 40000, 1}, {4, 12, 33, 12}};
  for (const Case& k : cases) {
    for (bool affine : {true, false}) {
      const Problem p = RandomProblem(k.n, k.c, k.spatial, k.groups, static_cast<uint32_t>(k.c * 7 + k.spatial), 0.0,
                                      affine);
      const auto out = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
      EXPECT_LT(MaxError(out, Reference(p, 1e-5f)), 1e-6) << k.n << "x" << k.c << "x" << k.spatial << "/" << k.groups;
    }
  }
}

TEST(GroupNorm, LargeMeanKeepsItsDigits) {
  // Values 1e4 + N(0, 1): float32 holds them to 5e-4, and the naive float32
  // E[x^2] - E[x]^2 = 1e8 - 1e8 loses every digit of the variance. The shifted float64 sums and
  // the float32 mean taken out before scaling keep the output within a few float32 ulps.
  for (double mean : {1e4, -3e5}) {
    const Problem p = RandomProblem(2, 4, 5000, 2, 3, mean);
    const auto out = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
    EXPECT_LT(MaxError(out, Reference(p, 1e-5f)), 1e-6) << mean;
  }
}

TEST(GroupNorm, ConstantGroupGivesBias) {
  // Variance 0 (spatial size 1 with one channel per group, or equal values): x - mean = 0 and
  // y = bias; with epsilon 0 it is 0 / 0 = NaN, as in PyTorch.
  Problem p{{2, 3, 1}, 3, {1, 2, 3, 4, 5, 6}, {2, 2, 2}, {0.5f, -1, 7}};
  auto out = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], p.bias[i % 3]) << i;
  out = RunGroupNorm(p, 0.0f, SerialTaskRunner());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;
  Problem equal{{1, 2, 300}, 1, std::vector<float>(600, 3.25f), {}, {}};
  out = RunGroupNorm(equal, 1e-5f, SerialTaskRunner());
  for (float v : out) ASSERT_EQ(v, 0.0f);
}

TEST(GroupNorm, NonFiniteValuesSpoilTheirGroupOnly) {
  Problem p = RandomProblem(2, 4, 9, 2, 5);
  p.input[3] = NAN;                          // sample 0, group 0
  p.input[2 * 9 + 4] = INFINITY;             // sample 0, group 1
  p.input[4 * 9 + 0] = -INFINITY;            // sample 1, group 0, as the block's first value
  const auto out = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
  for (int64_t i = 0; i < 3 * 2 * 9; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;
  const auto expected = Reference(p, 1e-5f);
  for (int64_t i = 6 * 9; i < 8 * 9; ++i) EXPECT_NEAR(out[i], expected[i], 2e-6) << i;  // sample 1, group 1
}

TEST(GroupNorm, HugeValuesDoNotOverflow) {
  // Squares of values near FLT_MAX overflow float32 but not float64.
  Problem p = RandomProblem(1, 2, 100, 1, 9);
  for (float& v : p.input) v *= 1e37f;
  const auto out = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
  EXPECT_LT(MaxError(out, Reference(p, 1e-5f)), 1e-6);
}

TEST(GroupNorm, EmptyWritesNothing) {
  for (NormLayout layout : {NormLayout{0, 4, 5}, NormLayout{2, 0, 5}, NormLayout{2, 4, 0}}) {
    float out = -7.0f;
    ASSERT_TRUE(cpu::GroupNorm<float>(nullptr, layout, 2, nullptr, nullptr, 1e-5f, &out, SerialTaskRunner()).ok());
    EXPECT_EQ(out, -7.0f);
  }
}

TEST(GroupNorm, ResultDoesNotDependOnThreads) {
  // Many small blocks (whole blocks per task, several blocks per task), and few large ones
  // (chunks per task in each pass).
  for (const Problem& p : {RandomProblem(3, 16, 50, 4, 1), RandomProblem(1, 6, 30000, 3, 2)}) {
    const auto serial = RunGroupNorm(p, 1e-5f, SerialTaskRunner());
    for (int threads : {2, 3}) {
      const auto threaded = RunGroupNorm(p, 1e-5f, testing::ThreadedTaskRunner(threads));
      ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float))) << threads;
    }
  }
}

TEST(GroupNorm, BlockAndChunkPathsAgreeBitForBit) {
  // The same blocks, 40 of them (whole blocks per task) or 2 (chunks per task): the statistics
  // are the same sums in the same order, so the outputs of the first two blocks are identical.
  const Problem many = RandomProblem(20, 4, 20000, 2, 4);
  Problem few = many;
  few.layout.batch = 1;
  few.input.resize(4 * 20000);
  const auto a = RunGroupNorm(many, 1e-5f, testing::ThreadedTaskRunner(2));
  const auto b = RunGroupNorm(few, 1e-5f, testing::ThreadedTaskRunner(2));
  ASSERT_EQ(0, std::memcmp(a.data(), b.data(), b.size() * sizeof(float)));
}

// The CUDA kernel's three steps (a warp's lane sums per chunk, combined; per block the statistics and
// its channels' norms; the values), run on the host thread by thread: the float32 values step 3
// computes, before the kernel stores them as T.
template <class T>
std::vector<float> DeviceCodeOnHost(const std::vector<T>& input, const NormLayout& layout, int64_t groups,
                                    const T* scale, const T* bias, float epsilon) {
  const int64_t cpg = layout.channels / groups, block_size = cpg * layout.spatial;
  const int64_t blocks = layout.batch * groups;
  const int64_t chunks_per_block = (block_size + shared::kNormChunk - 1) / shared::kNormChunk;
  std::vector<shared::Moments> chunk_moments;
  for (int64_t chunk = 0; chunk < blocks * chunks_per_block; ++chunk) {  // step 1: a warp per chunk
    double sums[shared::kNormLanes], squares[shared::kNormLanes];
    for (int lane = 0; lane < shared::kNormLanes; ++lane) {
      const shared::Moments m = shared::GroupNormLaneStep(input.data(), block_size, chunks_per_block, chunk, lane);
      sums[lane] = m.sum;
      squares[lane] = m.sum_sq;
    }
    for (int stride = 1; stride < shared::kNormLanes; stride *= 2) {  // the warp's tree, a level at a time
      for (int lane = 0; lane < shared::kNormLanes; ++lane) {
        shared::SumLanesStep(sums, lane, stride);
        shared::SumLanesStep(squares, lane, stride);
      }
    }
    chunk_moments.push_back({sums[0], squares[0]});
  }
  std::vector<shared::ChannelNorm> norms(static_cast<size_t>(layout.batch * layout.channels));
  for (int64_t b = 0; b < blocks; ++b) {  // step 2: a warp per block
    shared::Moments total;  // its first lane's, the chunks added in order 32 at a time
    for (int64_t k = 0; k < chunks_per_block; ++k) shared::AddChunk(chunk_moments[b * chunks_per_block + k], &total);
    const shared::BlockStats stats = shared::GroupNormBlockStats(total, input.data(), block_size, epsilon, b);
    for (int64_t k = 0; k < cpg; ++k) shared::GroupNormChannelStep(stats, groups, cpg, scale, bias, b, k, norms.data());
  }
  std::vector<float> values(input.size());
  for (int32_t i = 0; i < static_cast<int32_t>(values.size()); ++i) {  // step 3: a thread per value
    values[i] = shared::GroupNormValueStep<int32_t>(input.data(), static_cast<int32_t>(layout.spatial), norms.data(), i);
  }
  return values;
}

Problem NonfiniteProblem() {
  Problem p = RandomProblem(2, 4, 37, 2, 9);
  p.input[5] = std::numeric_limits<float>::infinity();
  p.input[80] = std::numeric_limits<float>::quiet_NaN();
  return p;
}

// The device code gives the CPU kernel's bits, for small and multi-chunk blocks with partial chunks
// and rows, a large mean, no affine, non-finite values and one value per group.
TEST(GroupNormDeviceCode, MatchesTheCpuKernelBitForBit) {
  const Problem problems[] = {RandomProblem(3, 16, 50, 4, 1), RandomProblem(1, 6, 30001, 3, 2),
                              RandomProblem(2, 8, 333, 8, 3, 1e4), RandomProblem(2, 3, 17, 1, 5, 0.0, false),
                              RandomProblem(4, 5, 1, 5, 6), RandomProblem(1, 2, 2048, 1, 7), NonfiniteProblem()};
  for (const Problem& p : problems) {
    const float epsilon = 1e-5f;
    const auto cpu = RunGroupNorm(p, epsilon, SerialTaskRunner());
    const auto device = DeviceCodeOnHost(p.input, p.layout, p.groups, p.scale.empty() ? nullptr : p.scale.data(),
                                         p.bias.empty() ? nullptr : p.bias.data(), epsilon);
    ASSERT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
        << p.layout.batch << "x" << p.layout.channels << "x" << p.layout.spatial << " groups " << p.groups;
  }
}

// Half storage: the CPU kernel, serially and on 3 threads, and the device code give the float32
// kernel's outputs on the half values (input, scale and bias), rounded once. Both task layouts
// (whole blocks; few large blocks in chunks), partial chunks, one value per plane, no affine, a large
// mean (float16's spacing is 8 at 1e4), values past float16's 65,504 (infinite there: the group is
// NaN), subnormal values and NaN.
template <class T>
void ExpectHalfGroupNorm() {
  Problem beyond = RandomProblem(2, 4, 40, 2, 11);
  beyond.input[7] = 70000.0f;
  Problem tiny = RandomProblem(3, 4, 60, 4, 12);
  for (int i = 0; i < 60; ++i) tiny.input[i] *= 1e-6f;  // plane 0: float16 subnormals
  const Problem problems[] = {RandomProblem(40, 8, 30, 4, 1),  RandomProblem(1, 6, 30001, 3, 2),
                              RandomProblem(2, 8, 333, 8, 3, 1e4), RandomProblem(2, 3, 17, 1, 5, 0.0, false),
                              RandomProblem(4, 5, 1, 5, 6),    beyond, tiny, NonfiniteProblem()};
  for (const Problem& p : problems) {
    const float epsilon = 1e-5f;
    const std::vector<T> input = testing::StoredAs<T>(p.input), scale = testing::StoredAs<T>(p.scale),
                         bias = testing::StoredAs<T>(p.bias);
    Problem rounded = p;  // the half values as float32
    rounded.input = testing::FloatsOf(input);
    rounded.scale = testing::FloatsOf(scale);
    rounded.bias = testing::FloatsOf(bias);
    const std::vector<float> float32 = RunGroupNorm(rounded, epsilon, SerialTaskRunner());
    const T* scale_data = scale.empty() ? nullptr : scale.data();
    const T* bias_data = bias.empty() ? nullptr : bias.data();
    std::vector<T> serial(input.size()), threaded(input.size());
    ASSERT_TRUE(cpu::GroupNorm(input.data(), p.layout, p.groups, scale_data, bias_data, epsilon, serial.data(),
                               SerialTaskRunner()).ok());
    ASSERT_TRUE(cpu::GroupNorm(input.data(), p.layout, p.groups, scale_data, bias_data, epsilon, threaded.data(),
                               testing::ThreadedTaskRunner(3)).ok());
    const std::vector<T> device =
        testing::StoredAs<T>(DeviceCodeOnHost(input, p.layout, p.groups, scale_data, bias_data, epsilon));
    testing::ExpectFloat32RoundedOnce(serial, float32, {&threaded, &device},
                                      std::to_string(p.layout.batch) + "x" + std::to_string(p.layout.channels) + "x" +
                                          std::to_string(p.layout.spatial) + " groups " + std::to_string(p.groups));
  }
}

TEST(GroupNormHalfStorage, Float16IsTheFloat32KernelRoundedOnce) { ExpectHalfGroupNorm<shared::Float16>(); }
TEST(GroupNormHalfStorage, BFloat16IsTheFloat32KernelRoundedOnce) { ExpectHalfGroupNorm<shared::BFloat16>(); }

}  // namespace
}  // namespace opbridge
