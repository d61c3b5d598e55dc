// Grid sampler kernel tests against closed-form answers. The float64 sweeps against
// torch.nn.functional.grid_sample are in tests/python/test_grid_sample.py.
#include "kernels/cpu/grid_sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "half_values.h"
#include "kernels/shared/grid_sample_3d.h"
#include "kernels/shared/grid_sample_taps.h"
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

// Grid values that stress the tap rule: NaN, infinities, huge, just past the edges, signed zeros.
std::vector<float> StressGrid(size_t entries, unsigned seed) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {nan, inf, -inf, 1e30f, -1e30f, 3e9f, -3e9f, 1.0f, -1.0f, 0.0f, -0.0f,
                            1.0000001f, -1.0000001f, 1.1f, -1.1f, 2.0f, -2.0f, 1e-30f};
  const size_t num_specials = sizeof(specials) / sizeof(specials[0]);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.3f, 1.3f);
  std::vector<float> grid(entries);
  for (float& v : grid) v = rng() % 6 == 0 ? specials[rng() % num_specials] : u(rng);
  return grid;
}

// An input with infinities and NaN among its values: a corner outside the input must still read 0
// next to them.
std::vector<float> StressInput(size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> input(size);
  for (float& v : input) v = u(rng);
  if (size >= 4) {
    input[0] = std::numeric_limits<float>::infinity();
    input[size / 2] = std::numeric_limits<float>::quiet_NaN();
    input[size - 1] = -std::numeric_limits<float>::infinity();
  }
  return input;
}

// The same bits, or both NaN: which NaN a product of two NaNs keeps is the compiler's choice of
// operand order, not part of the results.
bool SameBits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(float)) == 0;
}

// ATen's bilinear grid sample with zeros padding, written out for one point of one plane in float:
// corners outside the input read 0; nw * v_nw + ne * v_ne + sw * v_sw + se * v_se.
float AtenBilinearZeros(const float* plane, int64_t h, int64_t w, float gx, float gy, bool align_corners) {
  const float x = align_corners ? (gx + 1.0f) * (static_cast<float>(w - 1) / 2.0f)
                                : (gx + 1.0f) * (static_cast<float>(w) / 2.0f) - 0.5f;
  const float y = align_corners ? (gy + 1.0f) * (static_cast<float>(h - 1) / 2.0f)
                                : (gy + 1.0f) * (static_cast<float>(h) / 2.0f) - 0.5f;
  const float x0 = std::floor(x), y0 = std::floor(y);
  const float west = x - x0, east = 1.0f - west, north = y - y0, south = 1.0f - north;
  auto value = [&](float cx, float cy) {
    const bool inside = cx >= 0.0f && cx < static_cast<float>(w) && cy >= 0.0f && cy < static_cast<float>(h);
    return inside ? plane[static_cast<int64_t>(cy) * w + static_cast<int64_t>(cx)] : 0.0f;
  };
  return value(x0, y0) * (south * east) + value(x0 + 1.0f, y0) * (south * west) +
         value(x0, y0 + 1.0f) * (north * east) + value(x0 + 1.0f, y0 + 1.0f) * (north * west);
}

// Bilinear with zeros padding, bit for bit against the formula above on every path: a grid that
// samples each plane densely (a bordered copy per task, over two chunks of taps, the last one not
// a whole number of 16-point blocks), a sparse one (taps on the plane itself), planes of one row
// or column, channel counts below and above the 16 tasks per chunk, non-finite and huge grid
// values, and non-finite inputs. Under ./run.sh test's emulated CPUs this checks every x86-64
// level's code against the same bits.
TEST(GridSample, BilinearZerosMatchesAtenBitForBit) {
  struct Case { int64_t n, c, h, w, oh, ow; };
  const Case cases[] = {{1, 3, 40, 50, 300, 221}, {2, 17, 9, 11, 21, 37}, {1, 1, 1, 9, 40, 41},
                        {1, 2, 8, 1, 33, 3},      {1, 1, 1, 1, 5, 7},     {1, 2, 120, 90, 6, 5}};
  for (const Case& k : cases) {
    const auto input = StressInput(static_cast<size_t>(k.n * k.c * k.h * k.w), 7);
    const auto grid = StressGrid(static_cast<size_t>(k.n * k.oh * k.ow * 2), 8);
    for (int align = 0; align < 2; ++align) {
      GridSampleParams p;
      ASSERT_TRUE(MakeGridSampleParams(0, 0, align, &p).ok());
      const auto out = RunGridSample(p, input, k.n, k.c, k.h, k.w, grid, k.oh, k.ow, testing::ThreadedTaskRunner(3));
      const int64_t points = k.oh * k.ow;
      for (int64_t n = 0; n < k.n; ++n)
        for (int64_t c = 0; c < k.c; ++c)
          for (int64_t i = 0; i < points; ++i) {
            const float* g = grid.data() + (n * points + i) * 2;
            const float expected = AtenBilinearZeros(input.data() + (n * k.c + c) * k.h * k.w, k.h, k.w, g[0], g[1], align);
            const float actual = out[static_cast<size_t>((n * k.c + c) * points + i)];
            ASSERT_TRUE(SameBits(actual, expected)) << "case " << k.c << "x" << k.h << "x" << k.w << " -> " << k.oh
                                                    << "x" << k.ow << " align " << align << " channel " << c << " point "
                                                    << i << " (" << g[0] << ", " << g[1] << "): " << actual << " vs "
                                                    << expected;
          }
    }
  }
}

// Every mode and padding: the points of a grid that samples each plane densely (bordered copies
// for bilinear) give the same bits when sampled alone (a grid too small to copy the plane for).
TEST(GridSample, DenseAndSparseSamplingAgreeBitForBit) {
  const int64_t c = 5, h = 40, w = 50, oh = 300, ow = 221;  // dense: two chunks of taps
  const auto input = StressInput(static_cast<size_t>(c * h * w), 9);
  const auto grid = StressGrid(static_cast<size_t>(oh * ow * 2), 10);
  const int64_t picks = 61;  // every 1087th point
  std::vector<float> sparse_grid;
  for (int64_t k = 0; k < picks; ++k) {
    sparse_grid.push_back(grid[static_cast<size_t>(2 * k * 1087)]);
    sparse_grid.push_back(grid[static_cast<size_t>(2 * k * 1087 + 1)]);
  }
  for (int interp = 0; interp < 3; ++interp)
    for (int pad = 0; pad < 3; ++pad)
      for (int align = 0; align < 2; ++align) {
        GridSampleParams p;
        ASSERT_TRUE(MakeGridSampleParams(interp, pad, align, &p).ok());
        const auto dense = RunGridSample(p, input, 1, c, h, w, grid, oh, ow, SerialTaskRunner());
        const auto sparse = RunGridSample(p, input, 1, c, h, w, sparse_grid, 1, picks, testing::ThreadedTaskRunner(2));
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t k = 0; k < picks; ++k) {
            const float a = dense[static_cast<size_t>(ch * oh * ow + k * 1087)];
            const float b = sparse[static_cast<size_t>(ch * picks + k)];
            ASSERT_TRUE(SameBits(a, b)) << interp << pad << align << " channel " << ch << " point " << k * 1087
                                        << ": " << a << " vs " << b;
          }
      }
}

// The CUDA kernel's thread for an output point runs shared::GridSamplePoint: compiled for the
// host, it gives the CPU kernel's bits for every mode, padding and alignment, on dense grids (the
// CPU's bordered path) and sparse ones, with NaN, infinite and far coordinates (StressGrid).
TEST(GridSampleDeviceCode, MatchesTheCpuKernelBitForBit) {
  struct Case { int64_t n, c, h, w, oh, ow; };
  const Case cases[] = {{1, 3, 40, 50, 300, 221}, {2, 5, 9, 11, 21, 37}, {1, 1, 1, 9, 40, 41}, {2, 2, 120, 90, 6, 5}};
  for (const Case& k : cases) {
    const auto input = StressInput(static_cast<size_t>(k.n * k.c * k.h * k.w), 11);
    const auto grid = StressGrid(static_cast<size_t>(k.n * k.oh * k.ow * 2), 12);
    for (int interp = 0; interp < 3; ++interp)
      for (int pad = 0; pad < 3; ++pad)
        for (int align = 0; align < 2; ++align) {
          GridSampleParams p;
          ASSERT_TRUE(MakeGridSampleParams(interp, pad, align, &p).ok());
          const auto cpu = RunGridSample(p, input, k.n, k.c, k.h, k.w, grid, k.oh, k.ow, SerialTaskRunner());
          std::vector<float> device(cpu.size(), -1.0f);
          const shared::GridGeometry g(p, k.h, k.w);
          for (int64_t index = 0; index < k.n * k.oh * k.ow; ++index) {
            shared::GridSamplePoint(g, input.data(), k.c, grid.data(), k.oh * k.ow, index, device.data());
          }
          for (size_t i = 0; i < cpu.size(); ++i) {
            ASSERT_TRUE(SameBits(cpu[i], device[i])) << interp << pad << align << " case " << k.h << "x" << k.w
                                                      << " output " << i << ": " << cpu[i] << " vs " << device[i];
          }
        }
  }
}

// In half storage the CPU kernel (bordered and unbordered paths) and the device code give the same
// bits, the float32 kernel's outputs on the half values rounded once, stress grids included.
template <class T>
void CheckHalfStorage() {
  struct Case { int64_t n, c, h, w, oh, ow; };
  const Case cases[] = {{1, 3, 40, 50, 300, 221}, {2, 2, 120, 90, 6, 5}};
  for (const Case& k : cases) {
    const auto input = testing::StoredAs<T>(StressInput(static_cast<size_t>(k.n * k.c * k.h * k.w), 21));
    const auto grid = testing::StoredAs<T>(StressGrid(static_cast<size_t>(k.n * k.oh * k.ow * 2), 22));
    const std::vector<float> input_values = testing::FloatsOf(input), grid_values = testing::FloatsOf(grid);
    std::vector<char> scratch(cpu::GridSampleScratchBytes());
    for (int interp = 0; interp < 3; ++interp)
      for (int pad = 0; pad < 3; ++pad) {
        GridSampleParams p;
        ASSERT_TRUE(MakeGridSampleParams(interp, pad, 0, &p).ok());
        std::vector<T> cpu(static_cast<size_t>(k.n * k.c * k.oh * k.ow)), device(cpu.size());
        ASSERT_TRUE(cpu::GridSample(p, input.data(), k.n, k.c, k.h, k.w, grid.data(), k.oh, k.ow, cpu.data(),
                                    scratch.data(), SerialTaskRunner()).ok());
        const auto float32 = RunGridSample(p, input_values, k.n, k.c, k.h, k.w, grid_values, k.oh, k.ow,
                                           SerialTaskRunner());
        const shared::GridGeometry g(p, k.h, k.w);
        for (int64_t index = 0; index < k.n * k.oh * k.ow; ++index) {
          shared::GridSamplePoint(g, input.data(), k.c, grid.data(), k.oh * k.ow, index, device.data());
        }
        // NaN matches NaN: its sign is the CPU's choice (the vector and scalar paths' can differ).
        auto same = [](T a, T b) {
          const float x = shared::Load(&a), y = shared::Load(&b);
          return std::isnan(x) ? std::isnan(y) : a.bits == b.bits;
        };
        for (size_t i = 0; i < cpu.size(); ++i) {
          T once;
          shared::Store(&once, float32[i]);
          ASSERT_TRUE(same(cpu[i], device[i])) << interp << pad << " case " << k.h << "x" << k.w << " output " << i;
          ASSERT_TRUE(same(cpu[i], once)) << interp << pad << " case " << k.h << "x" << k.w << " output " << i;
        }
      }
  }
}

TEST(GridSampleDeviceCode, Float16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::Float16>();
}

TEST(GridSampleDeviceCode, BFloat16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::BFloat16>();
}

// The volumetric CUDA kernel's thread for an output point runs shared::GridSamplePoint3d: on the
// host it must give the CPU kernel's bits (its taps come from the same functions), for stress grids
// (NaN, infinities, huge values, exact edges) in every mode, padding and alignment, and the same
// values for any thread count.
TEST(GridSample3dDeviceCode, MatchesTheCpuKernelBitForBit) {
  struct Case { int64_t n, c, d, h, w, od, oh, ow; };
  const Case cases[] = {{1, 3, 4, 10, 12, 5, 30, 41}, {2, 2, 1, 3, 9, 2, 7, 9}, {1, 1, 7, 1, 1, 3, 3, 3}};
  std::vector<int32_t> scratch(cpu::GridSampleScratchBytes() / sizeof(int32_t));
  for (const Case& k : cases) {
    const auto input = StressInput(static_cast<size_t>(k.n * k.c * k.d * k.h * k.w), 13);
    const auto grid = StressGrid(static_cast<size_t>(k.n * k.od * k.oh * k.ow * 3), 14);
    const int64_t out_volume = k.od * k.oh * k.ow;
    for (int interp = 0; interp < 2; ++interp)
      for (int pad = 0; pad < 3; ++pad)
        for (int align = 0; align < 2; ++align) {
          GridSampleParams p;
          ASSERT_TRUE(MakeGridSampleParams(interp, pad, align, &p).ok());
          std::vector<float> cpu(static_cast<size_t>(k.n * k.c * out_volume)), threaded(cpu.size());
          ASSERT_TRUE(cpu::GridSample3d(p, input.data(), k.n, k.c, k.d, k.h, k.w, grid.data(), k.od, k.oh, k.ow,
                                        cpu.data(), scratch.data(), SerialTaskRunner()).ok());
          ASSERT_TRUE(cpu::GridSample3d(p, input.data(), k.n, k.c, k.d, k.h, k.w, grid.data(), k.od, k.oh, k.ow,
                                        threaded.data(), scratch.data(), testing::ThreadedTaskRunner(3)).ok());
          std::vector<float> device(cpu.size(), -1.0f);
          const shared::GridGeometry3d g{p, k.d, k.h, k.w};
          for (int64_t index = 0; index < k.n * out_volume; ++index) {
            shared::GridSamplePoint3d(g, input.data(), k.c, grid.data(), out_volume, index, device.data());
          }
          for (size_t i = 0; i < cpu.size(); ++i) {
            ASSERT_TRUE(SameBits(cpu[i], device[i])) << interp << pad << align << " output " << i;
            ASSERT_TRUE(SameBits(cpu[i], threaded[i])) << interp << pad << align << " output " << i;
          }
        }
  }
}

TEST(GridSample, RejectsBadCodesAndShapes) {
  GridSampleParams p;
  const GridSampleParams bilinear, bicubic{GridInterpolation::kBicubic, GridPadding::kZeros, false};
  EXPECT_NE(CheckGridSampleShapes(bilinear, {2, 3, 4, 4}, {1, 4, 4, 2}).message().find("batch"), std::string::npos);
  EXPECT_NE(CheckGridSampleShapes(bilinear, {2, 3, 4}, {2, 4, 4, 2}).message().find("rank 4"), std::string::npos);
  EXPECT_TRUE(CheckGridSampleShapes(bilinear, {2, 3, 4, 4, 4}, {2, 1, 4, 4, 3}).ok());
  EXPECT_NE(CheckGridSampleShapes(bicubic, {2, 3, 4, 4, 4}, {2, 1, 4, 4, 3}).message().find("needs a 4-D input"),
            std::string::npos);
  EXPECT_NE(CheckGridSampleShapes(bilinear, {2, 3, 4, 4, 4}, {2, 1, 4, 4, 2}).message().find("D_out"),
            std::string::npos);
  EXPECT_NE(CheckGridSampleInputVolume(2048, 2048, 1024).message().find("2^31 - 1"), std::string::npos);
  EXPECT_TRUE(CheckGridSampleInputVolume(1024, 1024, 1024).ok());
}

}  // namespace
}  // namespace opbridge
