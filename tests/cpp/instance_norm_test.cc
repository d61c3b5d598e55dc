// Instance normalization kernel tests: a closed form, a float64 reference per (sample, channel)
// plane, and that it is the group normalization kernel with G = C bit for bit. The sweeps through
// ORT and the peers' graphs are in tests/python/test_instance_norm.py.
#include "kernels/cpu/instance_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/group_norm.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Problem {
  NormLayout layout;
  std::vector<float> input, scale, bias;
};

Problem RandomProblem(int64_t n, int64_t c, int64_t spatial, uint32_t seed, double mean = 0.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p{{n, c, spatial}, std::vector<float>(n * c * spatial), std::vector<float>(c), std::vector<float>(c)};
  for (float& v : p.input) v = static_cast<float>(mean + normal(gen));
  for (int64_t k = 0; k < c; ++k) p.scale[k] = normal(gen), p.bias[k] = normal(gen);
  return p;
}

std::vector<float> RunInstanceNorm(const Problem& p, float epsilon, const TaskRunner& runner) {
  std::vector<float> out(p.input.size(), -7.0f);
  Status s = cpu::InstanceNorm(p.input.data(), p.layout, p.scale.data(), p.bias.data(), epsilon, out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(InstanceNorm, ClosedForm) {
  // Plane (0, 0) holds 1, 2, 3, 4 (mean 2.5, var 1.25); plane (0, 1) holds 0, 0, 0, 8 (mean 2,
  // var 12).
  Problem p{{1, 2, 4}, {1, 2, 3, 4, 0, 0, 0, 8}, {2, 1}, {0, -3}};
  const auto out = RunInstanceNorm(p, 0.0f, SerialTaskRunner());
  const double s0 = 2 / std::sqrt(1.25), s1 = 1 / std::sqrt(12.0);
  const double expected[] = {-1.5 * s0, -0.5 * s0, 0.5 * s0, 1.5 * s0, -2 * s1 - 3, -2 * s1 - 3, -2 * s1 - 3, 6 * s1 - 3};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
}

TEST(InstanceNorm, MatchesFloat64Reference) {
  for (double mean : {0.0, 1e4}) {
    const Problem p = RandomProblem(3, 5, 77, 11, mean);
    const auto out = RunInstanceNorm(p, 1e-5f, SerialTaskRunner());
    for (int64_t plane = 0; plane < 15; ++plane) {
      const float* x = p.input.data() + plane * 77;
      double m = 0.0, var = 0.0;
      for (int i = 0; i < 77; ++i) m += x[i];
      m /= 77;
      for (int i = 0; i < 77; ++i) var += (x[i] - m) * (x[i] - m);
      var /= 77;
      const int64_t c = plane % 5;
      for (int i = 0; i < 77; ++i) {
        const double expected = (x[i] - m) / std::sqrt(var + 1e-5) * p.scale[c] + p.bias[c];
        ASSERT_NEAR(out[plane * 77 + i], expected, 1e-6 * std::max(1.0, std::abs(expected))) << mean << " " << plane;
      }
    }
  }
}

TEST(InstanceNorm, IsGroupNormWithOneGroupPerChannel) {
  const Problem p = RandomProblem(2, 6, 300, 3);
  const auto instance = RunInstanceNorm(p, 1e-3f, SerialTaskRunner());
  std::vector<float> group(p.input.size());
  ASSERT_TRUE(cpu::GroupNorm(p.input.data(), p.layout, 6, p.scale.data(), p.bias.data(), 1e-3f, group.data(),
                             SerialTaskRunner()).ok());
  ASSERT_EQ(0, std::memcmp(instance.data(), group.data(), group.size() * sizeof(float)));
}

TEST(InstanceNorm, ResultDoesNotDependOnThreads) {
  for (const Problem& p : {RandomProblem(4, 16, 100, 4), RandomProblem(1, 2, 50000, 5)}) {
    const auto serial = RunInstanceNorm(p, 1e-5f, SerialTaskRunner());
    const auto threaded = RunInstanceNorm(p, 1e-5f, testing::ThreadedTaskRunner(3));
    ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  }
}

TEST(InstanceNorm, NoChannelsWritesNothing) {
  float out = -7.0f;
  ASSERT_TRUE(cpu::InstanceNorm<float>(nullptr, NormLayout{2, 0, 5}, nullptr, nullptr, 1e-5f, &out, SerialTaskRunner()).ok());
  EXPECT_EQ(out, -7.0f);
}

}  // namespace
}  // namespace opbridge
