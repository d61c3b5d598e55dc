// Grid sampler kernel tests against closed-form answers. The float64 sweeps against
// torch.nn.functional.grid_sample are in tests/python/test_grid_sample.py.
#include "kernels/cpu/grid_sample.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "task_runners.h"

namespace opbridge {
namespace {

std::vector<float> RunGridSample(const GridSampleParams& p, const std::vector<float>& input, int64_t n,
                       int64_t c, int64_t h, int64_t w, const std::vector<float>& grid,
                       int64_t oh, int64_t ow, const TaskRunner& runner) {
  std::vector<float> out(static_cast<size_t>(n * c * oh * ow));
  std::vector<char> scratch(cpu::GridSampleScratchBytes());
  Status s = cpu::GridSample(p, input.data(), n, c, h, w, grid.data(), oh, ow, out.data(), scratch.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// The grid that maps every output pixel onto the same input pixel centre.
std::vector<float> IdentityGrid(int64_t n, int64_t h, int64_t w, bool align_corners) {
  std::vector<float> g;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        if (align_corners) {
          g.push_back(2.0f * x / (w - 1) - 1.0f);
          g.push_back(2.0f * y / (h - 1) - 1.0f);
        } else {
          g.push_back((2.0f * x + 1.0f) / w - 1.0f);
          g.push_back((2.0f * y + 1.0f) / h - 1.0f);
        }
      }
  return g;
}

TEST(GridSample, IdentityGridReproducesInput) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> input(2 * 3 * 5 * 7);
  for (float& v : input) v = u(rng);
  for (int interp = 0; interp < 3; ++interp)
    for (int pad = 0; pad < 3; ++pad)
      for (int align = 0; align < 2; ++align) {
        GridSampleParams p;
        ASSERT_TRUE(MakeGridSampleParams(interp, pad, align, &p).ok());
        const auto out = RunGridSample(p, input, 2, 3, 5, 7, IdentityGrid(2, 5, 7, align), 5, 7,
                             SerialTaskRunner());
        for (size_t i = 0; i < input.size(); ++i) {
          ASSERT_NEAR(out[i], input[i], 2e-6) << interp << pad << align << " at " << i;
        }
      }
}

TEST(GridSample, OutsidePointsFollowThePaddingRule) {
  const std::vector<float> input = {1, 2, 3, 4};  // 2x2
  const std::vector<float> grid = {5.0f, 0.0f};   // far right, middle row
  GridSampleParams zeros, border;
  ASSERT_TRUE(MakeGridSampleParams(0, 0, 1, &zeros).ok());
  ASSERT_TRUE(MakeGridSampleParams(0, 1, 1, &border).ok());
  EXPECT_EQ(RunGridSample(zeros, input, 1, 1, 2, 2, grid, 1, 1, SerialTaskRunner())[0], 0.0f);
  EXPECT_FLOAT_EQ(RunGridSample(border, input, 1, 1, 2, 2, grid, 1, 1, SerialTaskRunner())[0], 3.0f);
}

TEST(GridSample, ResultDoesNotDependOnThreads) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.2f, 1.2f);
  const int64_t n = 2, c = 4, h = 9, w = 11, oh = 150, ow = 131;  // chunks and blocks do not divide
  std::vector<float> input(n * c * h * w), grid(n * oh * ow * 2);
  for (float& v : input) v = u(rng);
  for (float& v : grid) v = u(rng);
  for (int interp = 0; interp < 3; ++interp) {
    GridSampleParams p;
    ASSERT_TRUE(MakeGridSampleParams(interp, 2, 0, &p).ok());
    const auto serial = RunGridSample(p, input, n, c, h, w, grid, oh, ow, SerialTaskRunner());
    const auto threaded = RunGridSample(p, input, n, c, h, w, grid, oh, ow, testing::ThreadedTaskRunner(3));
    ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  }
}

TEST(GridSample, RejectsBadCodesAndShapes) {
  GridSampleParams p;
  EXPECT_NE(MakeGridSampleParams(3, 0, 0, &p).message().find("interpolation_mode"), std::string::npos);
  EXPECT_NE(MakeGridSampleParams(0, -1, 0, &p).message().find("padding_mode"), std::string::npos);
  EXPECT_NE(MakeGridSampleParams(0, 0, 2, &p).message().find("align_corners"), std::string::npos);
  EXPECT_NE(CheckGridSampleShapes({2, 3, 4, 4}, {1, 4, 4, 2}).message().find("batch"), std::string::npos);
  EXPECT_NE(CheckGridSampleShapes({2, 3, 4}, {2, 4, 4, 2}).message().find("rank 4"), std::string::npos);
}

}  // namespace
}  // namespace opbridge
