// Corner pooling kernel tests against a reference written from the mode definitions (section 5.8
// of the compatibility reference): top out[h] = max(in[h..H-1]), bottom max(in[0..h]), left
// out[w] = max(in[w..W-1]), right max(in[0..w]), NaN propagating (torch.cummax's rule), and
// among equal values (+0 and -0) the last one in scan order. The sweeps through ORT are in
// tests/python/test_corner_pool.py.
#include "kernels/cpu/corner_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "task_runners.h"

namespace opbridge {
namespace {

std::vector<float> Reference(const std::vector<float>& x, const Shape& shape, int mode) {
  const int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
  std::vector<float> out(x.size());
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t xx = 0; xx < w; ++xx) {
        // The positions pooled, in scan order: from the far edge towards (y, xx).
        std::vector<int64_t> order;
        if (mode == 0) for (int64_t k = h - 1; k >= y; --k) order.push_back(k * w + xx);
        if (mode == 1) for (int64_t k = 0; k <= y; ++k) order.push_back(k * w + xx);
        if (mode == 2) for (int64_t k = w - 1; k >= xx; --k) order.push_back(y * w + k);
        if (mode == 3) for (int64_t k = 0; k <= xx; ++k) order.push_back(y * w + k);
        const float* plane = x.data() + p * h * w;
        float best = plane[order[0]];
        bool nan = false;
        for (int64_t i : order) nan = nan || std::isnan(plane[i]);
        if (nan) {
          best = std::numeric_limits<float>::quiet_NaN();
        } else {
          for (int64_t i : order) {
            if (!(plane[i] < best)) best = plane[i];
          }
        }
        out[(p * h + y) * w + xx] = best;
      }
    }
  }
  return out;
}

std::vector<float> RunPool(const std::vector<float>& x, const Shape& shape, int mode, const TaskRunner& runner) {
  std::vector<float> out(x.size(), 7.0f);
  CornerPoolParams p;
  p.mode = static_cast<CornerPoolMode>(mode);
  const Status s = cpu::CornerPool(p, x.data(), shape, out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Bit-for-bit: NaN equals NaN (the kernel only copies input values), -0 and +0 differ.
bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> Data(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> roll(0, 199);
  std::vector<float> x(n);
  for (float& v : x) {
    const int r = roll(rng);
    v = r < 100 ? normal(rng) : static_cast<float>(r % 4);  // half ties
    if (r == 0) v = std::numeric_limits<float>::quiet_NaN();
    if (r == 1) v = std::numeric_limits<float>::infinity();
    if (r == 2) v = -std::numeric_limits<float>::infinity();
    if (r == 3 || r == 4) v = -0.0f;
    if (r == 5 || r == 6) v = 0.0f;
  }
  return x;
}

TEST(CornerPool, MatchesReference) {
  // H and W around the eight-row blocks of the horizontal scans and the lanes of the vertical ones.
  const std::vector<Shape> shapes = {{1, 1, 1, 1}, {1, 1, 1, 9}, {1, 1, 9, 1}, {2, 3, 5, 7}, {1, 2, 8, 8},
                                     {1, 3, 17, 16}, {2, 1, 9, 24}, {1, 1, 33, 31}, {1, 2, 4, 1030}};
  unsigned seed = 1;
  for (const Shape& shape : shapes) {
    const auto x = Data(NumElements(shape), seed++);
    for (int mode = 0; mode < 4; ++mode) {
      EXPECT_TRUE(SameBits(RunPool(x, shape, mode, SerialTaskRunner()), Reference(x, shape, mode)))
          << ShapeToString(shape) << " mode " << mode;
    }
  }
}

TEST(CornerPool, ModesOnAWorkedExample) {
  // One plane [[1, 3, 2], [4, 0, 5]].
  const std::vector<float> x = {1, 3, 2, 4, 0, 5};
  const Shape shape = {1, 1, 2, 3};
  EXPECT_EQ(RunPool(x, shape, 0, SerialTaskRunner()), (std::vector<float>{4, 3, 5, 4, 0, 5}));  // top
  EXPECT_EQ(RunPool(x, shape, 1, SerialTaskRunner()), (std::vector<float>{1, 3, 2, 4, 3, 5}));  // bottom
  EXPECT_EQ(RunPool(x, shape, 2, SerialTaskRunner()), (std::vector<float>{3, 3, 2, 5, 5, 5}));  // left
  EXPECT_EQ(RunPool(x, shape, 3, SerialTaskRunner()), (std::vector<float>{1, 3, 3, 4, 4, 5}));  // right
}

TEST(CornerPool, NanPropagatesAwayFromTheEdgeItStartsFrom) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, nan, 2, 3};  // one row of 4
  const Shape shape = {1, 1, 1, 4};
  const auto right = RunPool(x, shape, 3, SerialTaskRunner());
  EXPECT_EQ(right[0], 1.0f);
  EXPECT_TRUE(std::isnan(right[1]) && std::isnan(right[2]) && std::isnan(right[3]));
  const auto left = RunPool(x, shape, 2, SerialTaskRunner());
  EXPECT_TRUE(std::isnan(left[0]) && std::isnan(left[1]));
  EXPECT_EQ(left[2], 3.0f);
  EXPECT_EQ(left[3], 3.0f);
}

TEST(CornerPool, EmptyPlanesWriteNothing) {
  for (const Shape& shape : std::vector<Shape>{{0, 2, 3, 4}, {1, 0, 3, 4}, {1, 2, 0, 4}, {1, 2, 3, 0}}) {
    for (int mode = 0; mode < 4; ++mode) {
      CornerPoolParams p;
      p.mode = static_cast<CornerPoolMode>(mode);
      EXPECT_TRUE(cpu::CornerPool(p, nullptr, shape, nullptr, SerialTaskRunner()).ok());
    }
  }
}

TEST(CornerPool, RankOtherThanFourIsAnError) {
  CornerPoolParams p;
  const float x = 0.0f;
  float out = 0.0f;
  EXPECT_EQ(cpu::CornerPool(p, &x, {1, 1, 1}, &out, SerialTaskRunner()).message(),
            "input must have rank 4 [N, C, H, W], got shape [1, 1, 1]");
  EXPECT_EQ(cpu::CornerPool(p, &x, {1, 1, 1, 1, 1}, &out, SerialTaskRunner()).message(),
            "input must have rank 4 [N, C, H, W], got shape [1, 1, 1, 1, 1]");
}

TEST(CornerPool, ThreadCountDoesNotChangeResults) {
  const Shape shape = {2, 40, 37, 45};
  const auto x = Data(NumElements(shape), 91);
  for (int mode = 0; mode < 4; ++mode) {
    EXPECT_TRUE(SameBits(RunPool(x, shape, mode, SerialTaskRunner()),
                         RunPool(x, shape, mode, testing::ThreadedTaskRunner(3))))
        << mode;
  }
}

}  // namespace
}  // namespace opbridge
