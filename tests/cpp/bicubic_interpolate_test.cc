// Bicubic interpolation kernel tests: against the 2-D bicubic convolution written here in double
// (all 16 taps at once, from the rule: source index, clamped taps, A = -0.75), for both corner
// rules and scales up and down; thread independence; attribute and shape checks. The sweeps
// through ORT against F.interpolate are in tests/python/test_bicubic_interpolate.py.
#include "kernels/cpu/bicubic_interpolate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/shared/bicubic_taps.h"
#include "task_runners.h"

namespace opbridge {
namespace {

double Cubic(double d) {  // the A = -0.75 kernel at distance |d|
  const double a = -0.75, x = std::abs(d);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

double Source(int64_t o, int64_t in, int64_t out, double scale_factor, bool align) {
  if (align) return out > 1 ? double(in - 1) / double(out - 1) * o : 0.0;
  return (o + 0.5) / scale_factor - 0.5;
}

std::vector<double> Reference(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w, int64_t oh,
                              int64_t ow, double sh, double sw, bool align) {
  std::vector<double> out(planes * oh * ow);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      const double ry = Source(oy, h, oh, sh, align);
      const int64_t fy = static_cast<int64_t>(std::floor(ry));
      for (int64_t ox = 0; ox < ow; ++ox) {
        const double rx = Source(ox, w, ow, sw, align);
        const int64_t fx = static_cast<int64_t>(std::floor(rx));
        double sum = 0;
        for (int64_t j = -1; j <= 2; ++j) {
          for (int64_t i = -1; i <= 2; ++i) {
            const int64_t yy = std::min(std::max<int64_t>(fy + j, 0), h - 1);
            const int64_t xx = std::min(std::max<int64_t>(fx + i, 0), w - 1);
            sum += Cubic(ry - (fy + j)) * Cubic(rx - (fx + i)) * x[(p * h + yy) * w + xx];
          }
        }
        out[(p * oh + oy) * ow + ox] = sum;
      }
    }
  }
  return out;
}

void Check(int64_t planes, int64_t h, int64_t w, float sh, float sw, bool align) {
  std::mt19937 rng(static_cast<uint32_t>(h * 131 + w));
  std::normal_distribution<float> normal;
  std::vector<float> x(planes * h * w);
  for (auto& v : x) v = normal(rng);
  BicubicInterpolateParams p;
  ASSERT_TRUE(MakeBicubicInterpolateParams({sh, sw}, align ? 1 : 0, &p).ok());
  Shape out_shape;
  ASSERT_TRUE(BicubicInterpolateOutputShape({1, planes, h, w}, p, &out_shape).ok());
  const std::vector<double> expected =
      Reference(x, planes, h, w, out_shape[2], out_shape[3], sh, sw, align);
  HeapScratchAllocator scratch;
  std::vector<float> serial_out(expected.size()), threaded_out(expected.size());
  ASSERT_TRUE(cpu::BicubicInterpolate(x.data(), {1, planes, h, w}, p, out_shape, serial_out.data(), scratch,
                                      SerialTaskRunner())
                  .ok());
  ASSERT_TRUE(cpu::BicubicInterpolate(x.data(), {1, planes, h, w}, p, out_shape, threaded_out.data(), scratch,
                                      testing::ThreadedTaskRunner(3))
                  .ok());
  EXPECT_EQ(serial_out, threaded_out);
  for (size_t i = 0; i < expected.size(); ++i) {
    // Source indices are float32, as in PyTorch: up to ~300 px their rounding (~2e-5 px) times
    // the gradient of random data reaches ~5e-5.
    ASSERT_NEAR(serial_out[i], expected[i], 1e-4 * (1 + std::abs(expected[i]))) << i;
  }
}

TEST(BicubicInterpolateKernel, MatchesTheTwoDimensionalRule) {
  for (bool align : {false, true}) {
    Check(3, 5, 7, 2.f, 2.f, align);
    Check(2, 9, 6, 0.5f, 0.5f, align);
    Check(1, 1, 1, 3.f, 2.f, align);
    Check(2, 40, 300, 1.5f, 3.f, align);
    Check(1, 300, 260, 2.f, 1.f, align);  // several row blocks per plane
  }
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// A thread per output element makes its row's and column's taps and sums its 16 inputs
// (shared::MakeCubicTaps, shared::BicubicValue) with 32-bit indices, the axis scales computed on
// the host; the CPU kernel's two passes must give the same bits, NaN and infinities included.
TEST(BicubicInterpolateDeviceCode, MatchesTheCpuKernelBitForBit) {
  struct Case {
    int64_t planes, h, w;
    float sh, sw;
  };
  for (bool align : {false, true}) {
    for (const Case& c : {Case{3, 5, 7, 2.f, 2.f}, Case{2, 9, 6, 0.5f, 0.5f}, Case{1, 1, 1, 3.f, 2.f},
                          Case{2, 40, 300, 1.5f, 3.f}, Case{1, 300, 260, 2.f, 1.f}, Case{2, 13, 11, 3.7f, 0.3f}}) {
      std::mt19937 rng(static_cast<uint32_t>(c.h * 7 + c.w));
      std::normal_distribution<float> normal;
      std::vector<float> x(c.planes * c.h * c.w);
      for (auto& v : x) v = normal(rng);
      x[x.size() / 2] = std::numeric_limits<float>::quiet_NaN();
      x[0] = std::numeric_limits<float>::infinity();
      BicubicInterpolateParams p;
      ASSERT_TRUE(MakeBicubicInterpolateParams({c.sh, c.sw}, align ? 1 : 0, &p).ok());
      Shape out_shape;
      ASSERT_TRUE(BicubicInterpolateOutputShape({1, c.planes, c.h, c.w}, p, &out_shape).ok());
      const int64_t oh = out_shape[2], ow = out_shape[3];
      HeapScratchAllocator scratch;
      std::vector<float> cpu(c.planes * oh * ow), device(cpu.size());
      ASSERT_TRUE(cpu::BicubicInterpolate(x.data(), {1, c.planes, c.h, c.w}, p, out_shape, cpu.data(), scratch,
                                          SerialTaskRunner())
                      .ok());
      const float scale_h = shared::CubicAxisScale(c.h, oh, p.scale_h, p.align_corners);
      const float scale_w = shared::CubicAxisScale(c.w, ow, p.scale_w, p.align_corners);
      for (int32_t i = 0; i < static_cast<int32_t>(device.size()); ++i) {  // the kernel's threads
        const int32_t xo = i % ow, row = i / ow, yo = row % oh, plane = row / oh;
        const auto ty = shared::MakeCubicTaps<int32_t>(yo, c.h, scale_h, p.align_corners);
        const auto tx = shared::MakeCubicTaps<int32_t>(xo, c.w, scale_w, p.align_corners);
        device[i] = shared::BicubicValue<int32_t>(x.data() + plane * c.h * c.w, c.w, ty, tx);
      }
      ASSERT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
          << c.h << "x" << c.w << " by " << c.sh << "x" << c.sw << ", align_corners " << align;
    }
  }
}

TEST(BicubicInterpolateChecks, AttributesAndShapes) {
  BicubicInterpolateParams p;
  EXPECT_EQ(MakeBicubicInterpolateParams({2.f}, 1, &p).message(), "scale_factor must hold 2 values (height, width), got 1");
  EXPECT_FALSE(MakeBicubicInterpolateParams({2.f, 0.f}, 1, &p).ok());
  EXPECT_FALSE(MakeBicubicInterpolateParams({2.f, NAN}, 1, &p).ok());
  ASSERT_TRUE(MakeBicubicInterpolateParams({1.5f, 0.5f}, 0, &p).ok());
  Shape out;
  ASSERT_TRUE(BicubicInterpolateOutputShape({2, 3, 5, 7}, p, &out).ok());
  EXPECT_EQ(out, (Shape{2, 3, 7, 3}));
  EXPECT_FALSE(BicubicInterpolateOutputShape({2, 3, 5, 1}, p, &out).ok());
  EXPECT_FALSE(BicubicInterpolateOutputShape({2, 3, 5}, p, &out).ok());
  EXPECT_FALSE(BicubicInterpolateOutputShape({2, 3, 0, 4}, p, &out).ok());
}

}  // namespace
}  // namespace opbridge
