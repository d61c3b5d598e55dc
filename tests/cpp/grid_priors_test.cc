// Grid priors kernel tests: against mmdet's formula written out in double (exact for these
// sizes, so the float32 kernel must match it after one rounding), over grids that reach one and
// several tasks, serial and threaded, and the CUDA kernel's device code run on the host against it;
// the attribute and shape checks.
#include "kernels/cpu/grid_priors.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/shared/grid_priors.h"
#include "task_runners.h"

namespace opbridge {
namespace {

void CheckGrid(int64_t anchors, int64_t height, int64_t width, int64_t stride_h, int64_t stride_w, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> coord(-300.f, 300.f);
  std::vector<float> base(anchors * 4);
  for (auto& v : base) v = coord(rng);
  GridPriorsParams p;
  ASSERT_TRUE(MakeGridPriorsParams(stride_h, stride_w, &p).ok());
  std::vector<float> expected(height * width * anchors * 4);
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t a = 0; a < anchors; ++a) {
        const int64_t row = ((y * width + x) * anchors + a) * 4;
        // The shifts are exact; each sum is rounded once, as float32 addition rounds it.
        expected[row + 0] = static_cast<float>(double(base[a * 4 + 0]) + double(x * stride_w));
        expected[row + 1] = static_cast<float>(double(base[a * 4 + 1]) + double(y * stride_h));
        expected[row + 2] = static_cast<float>(double(base[a * 4 + 2]) + double(x * stride_w));
        expected[row + 3] = static_cast<float>(double(base[a * 4 + 3]) + double(y * stride_h));
      }
    }
  }
  for (int threads : {1, 3}) {
    std::vector<float> out(expected.size(), 7.f);
    const SerialTaskRunner serial;
    const testing::ThreadedTaskRunner threaded(threads);
    const TaskRunner& runner = threads == 1 ? static_cast<const TaskRunner&>(serial) : threaded;
    ASSERT_TRUE(cpu::GridPriors(base.data(), anchors, height, width, p, out.data(), runner).ok());
    EXPECT_EQ(out, expected) << "A " << anchors << " H " << height << " W " << width << " threads " << threads;
  }
  // What the CUDA kernel's thread for each row writes, in both of its index types.
  const float sw = static_cast<float>(stride_w), sh = static_cast<float>(stride_h);
  std::vector<float> device32(expected.size(), 7.f), device64(expected.size(), 7.f);
  for (int64_t row = 0; row < height * width * anchors; ++row) {
    shared::GridPriorRow<int32_t>(base.data(), static_cast<int32_t>(anchors), static_cast<int32_t>(width), sw, sh,
                                  static_cast<int32_t>(row), device32.data() + row * 4);
    shared::GridPriorRow<int64_t>(base.data(), anchors, width, sw, sh, row, device64.data() + row * 4);
  }
  EXPECT_EQ(device32, expected) << "device code, 32-bit rows: A " << anchors << " H " << height << " W " << width;
  EXPECT_EQ(device64, expected) << "device code, 64-bit rows: A " << anchors << " H " << height << " W " << width;
}

// The CPU kernel, serially and threaded, and the CUDA kernel's device code on the host.
TEST(GridPriorsKernel, MatchesTheFormula) {
  CheckGrid(3, 5, 7, 8, 8, 1);
  CheckGrid(9, 100, 168, 8, 8, 2);
  CheckGrid(1, 1, 1, 4, 4, 3);
  CheckGrid(2, 3, 1000, 16, 4, 4);
  CheckGrid(4, 7, 3, 1, 32, 5);
  CheckGrid(3, 9, 4, 0, -8, 6);
}

TEST(GridPriorsKernel, EmptyGridsAreNoWork) {
  const SerialTaskRunner runner;
  const GridPriorsParams p;
  EXPECT_TRUE(cpu::GridPriors(nullptr, 0, 4, 4, p, nullptr, runner).ok());
  EXPECT_TRUE(cpu::GridPriors(nullptr, 3, 0, 4, p, nullptr, runner).ok());
  EXPECT_TRUE(cpu::GridPriors(nullptr, 3, 4, 0, p, nullptr, runner).ok());
}

TEST(GridPriorsChecks, AttributesAndShapes) {
  GridPriorsParams p;
  EXPECT_TRUE(MakeGridPriorsParams(int64_t{1} << 24, -(int64_t{1} << 24), &p).ok());
  EXPECT_EQ(MakeGridPriorsParams((int64_t{1} << 24) + 1, 1, &p).message(),
            "stride_h must be in [-2^24, 2^24] (exact in float32), got 16777217");
  Shape out;
  ASSERT_TRUE(CheckGridPriorsShapes({9, 4}, {100}, {168}, &out).ok());
  EXPECT_EQ(out, (Shape{151200, 4}));
  EXPECT_FALSE(CheckGridPriorsShapes({9, 5}, {1}, {1}, &out).ok());
  EXPECT_FALSE(CheckGridPriorsShapes({4}, {1}, {1}, &out).ok());
  EXPECT_FALSE(CheckGridPriorsShapes({9, 4}, {1, 1}, {1}, &out).ok());
  EXPECT_FALSE(CheckGridPriorsShapes({9, 4}, {1}, {}, &out).ok());
  EXPECT_FALSE(CheckGridPriorsShapes({int64_t{1} << 40, 4}, {int64_t{1} << 20}, {4}, &out).ok());
}

}  // namespace
}  // namespace opbridge
