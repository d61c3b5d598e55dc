// RoIAlign kernel tests against closed-form answers. The float64 sweeps against torchvision
// are in tests/python/test_roi_align.py.
#include "kernels/cpu/roi_align.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/work_limits.h"
#include "half_values.h"
#include "kernels/shared/roi_align_sampling.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Feature {
  int64_t n, c, h, w;
  std::vector<float> data;
};

// Channel c holds f(y, x) = c + x (a ramp along x): bilinear interpolation is exact on it.
Feature RampFeature(int64_t n, int64_t c, int64_t h, int64_t w) {
  Feature f{n, c, h, w, std::vector<float>(static_cast<size_t>(n * c * h * w))};
  for (int64_t i = 0; i < n * c; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) f.data[(i * h + y) * w + x] = static_cast<float>(i % c + x);
  return f;
}

std::vector<float> RunRoiAlign(const RoiAlignParams& p, const Feature& f, const std::vector<float>& rois,
                       const TaskRunner& runner) {
  const int64_t r = static_cast<int64_t>(rois.size() / 5);
  std::vector<float> out(static_cast<size_t>(r * f.c * p.output_height * p.output_width));
  Status s = cpu::RoiAlign(p, f.data.data(), f.n, f.c, f.h, f.w, rois.data(), r, out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(RoiAlign, AvgOfRampIsBinCentre) {
  const Feature f = RampFeature(1, 3, 16, 16);
  for (int64_t sampling : {0, 1, 2, 3}) {
    RoiAlignParams p;
    p.output_height = 2;
    p.output_width = 4;
    p.sampling_ratio = sampling;
    p.aligned = true;
    p.spatial_scale = 0.5f;
    const std::vector<float> rois = {0, 4, 6, 20, 18};  // x in [1.5, 9.5] after scale and shift
    const auto out = RunRoiAlign(p, f, rois, SerialTaskRunner());
    const double start = 4 * 0.5 - 0.5, bin = (20 - 4) * 0.5 / 4;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t ph = 0; ph < 2; ++ph)
        for (int64_t pw = 0; pw < 4; ++pw) {
          const double expected = c + start + (pw + 0.5) * bin;
          EXPECT_NEAR(out[(c * 2 + ph) * 4 + pw], expected, 1e-5) << "sampling " << sampling;
        }
  }
}

TEST(RoiAlign, MaxOfRampIsLastSample) {
  const Feature f = RampFeature(1, 1, 8, 8);
  RoiAlignParams p;
  p.output_height = p.output_width = 1;
  p.sampling_ratio = 2;
  p.aligned = false;
  p.mode = RoiPoolMode::kMax;
  const auto out = RunRoiAlign(p, f, {0, 1, 1, 5, 5}, SerialTaskRunner());
  EXPECT_NEAR(out[0], 1 + 0.75 * 4, 1e-6);  // samples at x = 1 + {0.25, 0.75} * 4
}

TEST(RoiAlign, SamplesOutsideTheImageReadZero) {
  Feature f{1, 1, 4, 4, std::vector<float>(16, 1.0f)};
  RoiAlignParams p;
  p.output_height = p.output_width = 1;
  p.sampling_ratio = 1;
  p.aligned = false;
  const auto out = RunRoiAlign(p, f, {0, 100, 100, 110, 110}, SerialTaskRunner());
  EXPECT_EQ(out[0], 0.0f);
}

TEST(RoiAlign, NonFiniteRoiGivesNaN) {
  const Feature f = RampFeature(1, 2, 8, 8);
  RoiAlignParams p;
  p.output_height = p.output_width = 2;
  const auto out = RunRoiAlign(p, f, {0, NAN, 1, 4, 4, 0, 1, 1, 4, INFINITY}, SerialTaskRunner());
  for (float v : out) EXPECT_TRUE(std::isnan(v));
}

TEST(RoiAlign, ResultDoesNotDependOnThreads) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f), pos(-8.0f, 72.0f);
  Feature f{2, 5, 32, 40, std::vector<float>(2 * 5 * 32 * 40)};
  for (float& v : f.data) v = u(rng);
  std::vector<float> rois;
  for (int r = 0; r < 50; ++r) {
    float x1 = pos(rng), y1 = pos(rng);
    rois.insert(rois.end(), {static_cast<float>(r % 2), x1, y1, x1 + 20 * u(rng), y1 + 20 * u(rng)});
  }
  for (RoiPoolMode mode : {RoiPoolMode::kAvg, RoiPoolMode::kMax}) {
    RoiAlignParams p;
    p.output_height = p.output_width = 7;
    p.spatial_scale = 0.5f;
    p.mode = mode;
    const auto serial = RunRoiAlign(p, f, rois, SerialTaskRunner());
    const auto threaded = RunRoiAlign(p, f, rois, testing::ThreadedTaskRunner(3));
    ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  }
}

TEST(RoiAlign, AbsurdAdaptiveGridIsAnError) {
  const Feature f = RampFeature(1, 1, 4, 4);
  RoiAlignParams p;
  p.output_height = p.output_width = 1;
  p.aligned = true;
  std::vector<float> out(1);
  const std::vector<float> rois = {0, 0, 0, 1e12f, 1e12f};
  Status s = cpu::RoiAlign(p, f.data.data(), 1, 1, 4, 4, rois.data(), 1, out.data(), SerialTaskRunner());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sampling_ratio"), std::string::npos) << s.message();
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// The CUDA kernel's block for a (RoI, channel tile) plans the RoI, computes its row and column taps
// into shared memory where they fit, and pools the tile's elements (shared::RoiTileValue); the same
// functions, compiled for the host, must match the CPU kernel bit for bit on every output (the same
// samples, weights and order of operations: the CPU kernel shares each row's sums among the bins, the
// device code recomputes them per bin), and give NaN where the CPU op reports a bad RoI.
// T is the storage type of the map, the RoIs and the output (float, Float16 or BFloat16).
template <class T>
std::vector<T> RunDeviceCodeOf(const RoiAlignParams& p, const Feature& f, const std::vector<T>& data,
                               const std::vector<T>& rois, int64_t tile_channels = 2) {
  const int64_t r = static_cast<int64_t>(rois.size() / 5), bins = p.output_height * p.output_width;
  std::vector<T> out(static_cast<size_t>(r * f.c * bins));
  for (int64_t roi = 0; roi < r; ++roi) {
    for (int64_t first = 0; first < f.c; first += tile_channels) {  // a block per (RoI, tile)
      const shared::RoiPlan plan = shared::MakeRoiPlan(p, rois.data() + 5 * roi, f.n);
      const bool tapped = shared::RoiTapsFit(p, plan);
      std::vector<shared::AxisTapOf<int32_t>> rows, columns;
      if (tapped) {
        for (int32_t t = 0; t < shared::GridRows<int32_t>(plan.geometry) * p.output_height; ++t) {
          rows.push_back(shared::RoiRowTap<int32_t>(plan.geometry, static_cast<int32_t>(f.h), t));
        }
        for (int32_t t = 0; t < shared::GridColumns<int32_t>(plan.geometry) * p.output_width; ++t) {
          columns.push_back(shared::RoiColumnTap<int32_t>(plan.geometry, static_cast<int32_t>(f.w), t));
        }
      }
      const int64_t tile = std::min(tile_channels, f.c - first);
      T* tile_out = out.data() + (roi * f.c + first) * bins;
      for (int32_t e = 0; e < static_cast<int32_t>(tile * bins); ++e) {  // its threads, 32-bit indices
        shared::Store(tile_out + e,
                      shared::RoiTileValue<int32_t>(p, plan, tapped, rows.data(), columns.data(), data.data(), f.c,
                                                    static_cast<int32_t>(f.h), static_cast<int32_t>(f.w), first, e));
      }
    }
  }
  return out;
}

std::vector<float> RunDeviceCode(const RoiAlignParams& p, const Feature& f, const std::vector<float>& rois,
                                 int64_t tile_channels = 2) {
  return RunDeviceCodeOf<float>(p, f, f.data, rois, tile_channels);
}

TEST(RoiAlignDeviceCode, MatchesTheCpuKernel) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Feature f{2, 3, 13, 17, std::vector<float>(2 * 3 * 13 * 17)};
  for (float& v : f.data) v = u(rng);
  std::vector<float> rois;
  for (int r = 0; r < 60; ++r) {  // inside, across the borders, tiny, inverted and huge boxes
    const float x1 = 40 * u(rng), y1 = 40 * u(rng);
    const float w = r % 7 == 0 ? -3 * std::fabs(u(rng)) : 30 * std::fabs(u(rng));
    rois.insert(rois.end(), {static_cast<float>(r % 2), x1, y1, x1 + w, y1 + (r % 5 == 0 ? 0.01f : w * 0.7f)});
  }
  rois.insert(rois.end(), {1, -100, -100, -50, -50});  // entirely outside: zeros
  rois.insert(rois.end(), {0, -10, -10, 2000, 30});     // 200 sample columns a bin: too many taps to share
  for (RoiPoolMode mode : {RoiPoolMode::kAvg, RoiPoolMode::kMax}) {
    for (int64_t sampling : {0, 2}) {
      for (bool aligned : {false, true}) {
        RoiAlignParams p;
        p.output_height = 5;
        p.output_width = 4;
        p.spatial_scale = 0.5f;
        p.sampling_ratio = sampling;
        p.aligned = aligned;
        p.mode = mode;
        const auto cpu = RunRoiAlign(p, f, rois, SerialTaskRunner());
        const auto device = RunDeviceCode(p, f, rois);
        for (size_t i = 0; i < cpu.size(); ++i) ASSERT_EQ(cpu[i], device[i]) << i;
      }
    }
  }
}

// In half storage the CPU kernel and the device code give the same bits, and those are the float32
// kernel's outputs on the half values, rounded once (the CPU kernel converts whole planes for a
// group of many RoIs, and the row spans it reads for few: both are run).
template <class T>
void CheckHalfStorage() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Feature f{2, 3, 13, 17, std::vector<float>(2 * 3 * 13 * 17)};
  for (float& v : f.data) v = static_cast<float>(u(rng) * (1 << (rng() % 24)) * 1e-3);  // 1e-3 to 8e3
  std::vector<float> all_rois;
  for (int r = 0; r < 40; ++r) {
    const float x1 = 40 * u(rng), y1 = 40 * u(rng), w = 30 * std::fabs(u(rng));
    all_rois.insert(all_rois.end(), {static_cast<float>(r % 2), x1, y1, x1 + w, y1 + w * 0.7f});
  }
  const std::vector<T> data = testing::StoredAs<T>(f.data);
  Feature rounded = f;
  rounded.data = testing::FloatsOf(data);
  for (size_t count : {size_t{2}, size_t{40}}) {
    const std::vector<float> rois_f(all_rois.begin(), all_rois.begin() + 5 * count);
    const std::vector<T> rois = testing::StoredAs<T>(rois_f);
    const std::vector<float> rounded_rois = testing::FloatsOf(rois);
    for (RoiPoolMode mode : {RoiPoolMode::kAvg, RoiPoolMode::kMax}) {
      RoiAlignParams p;
      p.output_height = 5;
      p.output_width = 4;
      p.spatial_scale = 0.5f;
      p.aligned = true;
      p.mode = mode;
      std::vector<T> cpu(count * f.c * 20);
      ASSERT_TRUE(cpu::RoiAlign(p, data.data(), f.n, f.c, f.h, f.w, rois.data(), static_cast<int64_t>(count),
                                cpu.data(), SerialTaskRunner()).ok());
      const std::vector<T> device = RunDeviceCodeOf<T>(p, f, data, rois);
      const std::vector<float> float32 = RunRoiAlign(p, rounded, rounded_rois, SerialTaskRunner());
      testing::ExpectFloat32RoundedOnce(cpu, float32, {&device});
    }
  }
}

TEST(RoiAlignDeviceCode, Float16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::Float16>();
}

TEST(RoiAlignDeviceCode, BFloat16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::BFloat16>();
}

TEST(RoiAlignDeviceCode, AHugeBinAveragesItsConstantMapExactly) {
  // 2^13 x 2^13 samples of 3.0 in one bin: summed sample by sample in float32 (torchvision's order)
  // the sum stops growing at 2^26 and the average comes out as 1.0; summed separably each row sum
  // is exact, and so is the total.
  const Feature f{1, 1, 2, 2, std::vector<float>(4, 3.0f)};
  RoiAlignParams p;
  p.output_height = p.output_width = 1;
  p.sampling_ratio = int64_t{1} << 13;
  p.aligned = false;
  const auto device = RunDeviceCode(p, f, {0, 0, 0, 1, 1});
  EXPECT_EQ(device[0], 3.0f);
  EXPECT_EQ(RunRoiAlign(p, f, {0, 0, 0, 1, 1}, SerialTaskRunner())[0], 3.0f);
}

TEST(RoiAlignDeviceCode, AnEmptyBatchGivesNanRowsWithoutReadingTheInput) {
  // With N = 0 a batch index of -0.5 once passed the (-1, N) test and truncated to image 0 of an empty
  // tensor: an illegal address on the GPU. Here the input has no values (data() is null): a read
  // would crash the test. The CPU op reports it (test_roi_align.py).
  const Feature empty{0, 2, 4, 4, {}};
  RoiAlignParams p;
  p.output_height = p.output_width = 2;
  for (float b : {-0.5f, 0.0f, -0.0f, 0.9f}) {
    const auto device = RunDeviceCode(p, empty, {b, 0, 0, 2, 2});
    ASSERT_EQ(device.size(), 8u);
    for (float v : device) EXPECT_TRUE(std::isnan(v)) << "batch index " << b;
  }
  EXPECT_FALSE(shared::IsRoiBatchIndex(-0.5f, 0));
  EXPECT_TRUE(shared::IsRoiBatchIndex(-0.5f, 1));
  EXPECT_FALSE(shared::IsRoiBatchIndex(1.0f, 1));
}

TEST(RoiAlignDeviceCode, BadRoisGiveNanRowsWhereTheCpuOpReportsAnError) {
  const Feature f = RampFeature(2, 2, 8, 8);
  RoiAlignParams p;
  p.output_height = p.output_width = 2;
  p.aligned = true;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> rois = {0, 1, 1, 5, 5,        // fine
                                   2, 1, 1, 5, 5,        // batch index 2 of 2
                                   -1, 1, 1, 5, 5,       // -1 truncates to -1
                                   nan, 1, 1, 5, 5,      // NaN batch index
                                   1, nan, 1, 5, 5,      // NaN box (NaN on the CPU too)
                                   1, 0, 0, inf, 5,      // infinite box
                                   0, 0, 0, 1e12f, 1e12f,  // an adaptive grid beyond the limits
                                   1.9f, 1, 1, 5, 5};    // 1.9 truncates to 1: fine
  const auto device = RunDeviceCode(p, f, rois);
  const auto rows = [&](int r) { return std::vector<float>(device.begin() + r * 8, device.begin() + r * 8 + 8); };
  for (int r : {1, 2, 3, 4, 5, 6}) {
    for (float v : rows(r)) EXPECT_TRUE(std::isnan(v)) << "roi " << r;
  }
  for (int r : {0, 7}) {
    for (float v : rows(r)) EXPECT_FALSE(std::isnan(v)) << "roi " << r;
  }
  const std::vector<float> good = {0, 1, 1, 5, 5, 1, 1, 1, 5, 5};
  const auto cpu = RunRoiAlign(p, f, good, SerialTaskRunner());
  EXPECT_EQ(rows(0), std::vector<float>(cpu.begin(), cpu.begin() + 8));
  EXPECT_EQ(rows(7), std::vector<float>(cpu.begin() + 8, cpu.end()));
}

// The per-call limits (core/work_limits.h): outputs of at most 2^30 elements (a shape whose count
// overflows too), and samples x channels of at most 2^36, counted RoI by RoI (a grid of <= 0 rows or
// columns takes no sample); the CPU kernel refuses a call before pooling any of its RoIs.
TEST(CallLimits, OutputsAndSampleWork) {
  EXPECT_TRUE(CheckCallOutputElements({1024, 1024, 1024}).ok());
  EXPECT_EQ(CheckCallOutputElements({1024, 1024, 1025}).message(),
            "the output [1024, 1024, 1025] would hold more than the limit of 2^30 (1073741824) elements per call");
  EXPECT_FALSE(CheckCallOutputElements({int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_EQ(RoiSamples(49, 2, 3), 294);
  EXPECT_EQ(RoiSamples(49, -2, -3), 0);
  CallSampleWork work(16);
  EXPECT_TRUE(work.Add(int64_t{1} << 31).ok());  // 2^35 so far
  EXPECT_TRUE(work.Add(int64_t{1} << 31).ok());  // 2^36: the limit itself is allowed
  EXPECT_EQ(work.Add(1).message(),
            "the rois need at least 4294967297 samples for each of 16 channels, more than the limit of 2^36 "
            "(68719476736) samples x channels per call; pass a smaller positive sampling_ratio or fewer rois");
  RoiAlignParams p;
  p.output_height = p.output_width = 1;
  p.sampling_ratio = 0;
  p.aligned = false;
  std::vector<float> input(64, 1.0f), out(64, -1.0f);
  const float roi[5] = {0, 0, 0, 46000, 46000};
  EXPECT_FALSE(cpu::RoiAlign(p, input.data(), 1, 64, 1, 1, roi, 1, out.data(), SerialTaskRunner()).ok());
  EXPECT_EQ(out, std::vector<float>(64, -1.0f));  // nothing pooled
}

}  // namespace
}  // namespace opbridge
