// Gather of top-k rows kernel tests: against the rule written element by element, for both index
// dtypes and both element widths, over layouts that reach the one-element and memcpy row paths
// and several tasks; the index and shape checks. The sweeps through ORT against PyTorch's
// indexing are in tests/python/test_gather_topk.py.
#include "kernels/cpu/gather_topk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "task_runners.h"

namespace opbridge {
namespace {

template <class Word, class Index>
void CheckLayout(const GatherTopkLayout& layout, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Word> data(layout.batch * layout.candidates * layout.row);
  for (auto& v : data) v = static_cast<Word>(rng());
  std::vector<Index> indices(layout.batch * layout.picks);
  std::uniform_int_distribution<int64_t> pick(-layout.candidates, layout.candidates - 1);
  for (auto& i : indices) i = static_cast<Index>(pick(rng));
  // The rule, element by element.
  std::vector<Word> expected(layout.batch * layout.picks * layout.row);
  for (int64_t b = 0; b < layout.batch; ++b) {
    for (int64_t g = 0; g < layout.picks; ++g) {
      int64_t source = indices[b * layout.picks + g];
      if (source < 0) source += layout.candidates;
      for (int64_t c = 0; c < layout.row; ++c) {
        expected[(b * layout.picks + g) * layout.row + c] = data[(b * layout.candidates + source) * layout.row + c];
      }
    }
  }
  Shape indices_shape{layout.batch, layout.picks};
  ASSERT_TRUE(CheckGatherTopkIndices(indices.data(), indices_shape, layout.candidates, 1).ok());
  for (int threads : {1, 3}) {
    std::vector<Word> output(expected.size(), Word(7));
    const SerialTaskRunner serial;
    const testing::ThreadedTaskRunner threaded(threads);
    const TaskRunner& runner = threads == 1 ? static_cast<const TaskRunner&>(serial) : threaded;
    ASSERT_TRUE(cpu::GatherTopk(data.data(), sizeof(Word), indices.data(), layout, output.data(), runner).ok());
    EXPECT_EQ(output, expected) << "threads " << threads;
  }
}

TEST(GatherTopkKernel, MatchesTheRuleForEveryWidthAndIndexType) {
  const std::vector<GatherTopkLayout> layouts = {
      {1, 5, 3, 1},         {2, 7, 7, 4},        {3, 20, 9, 80},     {2, 3000, 1000, 1},
      {1, 1, 1, 1},         {2, 9, 300000, 1},   {4, 6, 2, 5000},    {3, 50, 40, 4000}};
  uint32_t seed = 1;
  for (const auto& layout : layouts) {
    CheckLayout<uint32_t, int32_t>(layout, seed++);
    CheckLayout<uint32_t, int64_t>(layout, seed++);
    CheckLayout<uint64_t, int32_t>(layout, seed++);
    CheckLayout<uint64_t, int64_t>(layout, seed++);
  }
}

TEST(GatherTopkKernel, EmptyLayoutsAreNoWork) {
  const SerialTaskRunner runner;
  float out = 7.f;
  const int64_t idx = 0;
  EXPECT_TRUE(cpu::GatherTopk(nullptr, 4, &idx, GatherTopkLayout{0, 5, 3, 2}, nullptr, runner).ok());
  EXPECT_TRUE(cpu::GatherTopk(nullptr, 4, &idx, GatherTopkLayout{2, 5, 3, 0}, nullptr, runner).ok());
  EXPECT_TRUE(cpu::GatherTopk(nullptr, 4, &idx, GatherTopkLayout{2, 5, 0, 2}, &out, runner).ok());
  EXPECT_EQ(out, 7.f);
}

TEST(GatherTopkChecks, IndicesOutOfRangeAreNamed) {
  const std::vector<int64_t> indices = {0, -4, 3, 4};
  Status s = CheckGatherTopkIndices(indices.data(), Shape{2, 2}, 4, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "indices[1, 1] = 4 is out of range for data's axis 1 of size 4: an index must be in [-4, 3] (a negative "
            "one counts from the end, as in PyTorch's indexing)");
  const std::vector<int32_t> low = {-5};
  EXPECT_FALSE(CheckGatherTopkIndices(low.data(), Shape{1}, 4, 0).ok());
  s = CheckGatherTopkIndices(low.data(), Shape{1}, 0, 0);
  EXPECT_EQ(s.message(), "indices[0] = -5 picks from data's axis 0, which has size 0 (nothing to gather)");
}

TEST(GatherTopkChecks, Shapes) {
  Shape out;
  ASSERT_TRUE(CheckGatherTopkShapes({2, 10, 4}, {2, 3}, &out).ok());
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_TRUE(CheckGatherTopkShapes({10}, {3}, &out).ok());
  EXPECT_EQ(out, (Shape{3}));
  EXPECT_FALSE(CheckGatherTopkShapes({2, 10}, {}, &out).ok());
  EXPECT_FALSE(CheckGatherTopkShapes({10}, {1, 3}, &out).ok());
  EXPECT_FALSE(CheckGatherTopkShapes({2, 10, 4}, {3, 3}, &out).ok());
}

// The CUDA kernel's threads (kernels/cuda/gather_topk.cu) run on the host: thread e writes
// GatherTopkElement: the CPU kernel's output where the indices are good; where an index is out of
// range (the CPU op's error, which the GPU does not wait to report), its row's words with every bit
// set (NaN in float data, -1 in integer data), and every other row the CPU kernel's.
template <class Word, class Index>
void CheckDeviceCode() {
  const GatherTopkLayout layout{3, 7, 5, 4};
  std::mt19937 rng(5);
  std::vector<Word> data(layout.batch * layout.candidates * layout.row);
  for (auto& v : data) v = static_cast<Word>(rng());
  std::vector<Index> indices = {0, -7, 6, 3, -1, 2, 2, 2, -3, 4, 6, 5, 0, 1, -2};
  const int32_t count = static_cast<int32_t>(layout.batch * layout.picks * layout.row);
  const auto run_device = [&] {
    std::vector<Word> device(count);
    for (int32_t e = 0; e < count; ++e) {
      device[e] = GatherTopkElement<Word, Index, int32_t>(data.data(), indices.data(), 5, 7, 4, e);
    }
    return device;
  };
  std::vector<Word> cpu(count);
  ASSERT_TRUE(cpu::GatherTopk(data.data(), sizeof(Word), indices.data(), layout, cpu.data(), SerialTaskRunner()).ok());
  EXPECT_EQ(run_device(), cpu);
  indices[11] = 7;  // indices[2, 1]: one past the end
  indices[13] = -8;  // indices[2, 3]: one before the start
  const std::vector<Word> device = run_device();
  for (int32_t e = 0; e < count; ++e) {
    const int32_t r = e / 4;
    EXPECT_EQ(device[e], (r == 11 || r == 13) ? static_cast<Word>(~Word{0}) : cpu[e]) << "element " << e;
  }
  EXPECT_EQ(CheckGatherTopkIndices(indices.data(), {3, 5}, layout.candidates, 1).message().substr(0, 19),
            "indices[2, 1] = 7 i");
}

TEST(GatherTopkDeviceCode, MatchesTheCpuKernelAndSetsEveryBitOfABadIndexsRows) {
  CheckDeviceCode<uint32_t, int64_t>();
  CheckDeviceCode<uint64_t, int32_t>();
  // All ones: a NaN as float32 and float64 data, -1 as int32 and int64 data.
  float f;
  double d;
  const uint32_t ones32 = ~0u;
  const uint64_t ones64 = ~0ull;
  std::memcpy(&f, &ones32, 4);
  std::memcpy(&d, &ones64, 8);
  EXPECT_TRUE(std::isnan(f) && std::isnan(d));
  EXPECT_EQ(static_cast<int32_t>(ones32), -1);
  EXPECT_EQ(static_cast<int64_t>(ones64), -1);
}

}  // namespace
}  // namespace opbridge
