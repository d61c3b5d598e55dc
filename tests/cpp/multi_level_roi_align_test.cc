// Multi-level RoIAlign kernel tests: mmdet's level mapper at its boundaries, roi_rescale, each
// RoI pooled exactly as RoIAlign pools its (rescaled) box at its level, and thread independence.
// The sweeps against a float64 reference are in tests/python/test_multi_level_roi_align.py.
#include "kernels/cpu/multi_level_roi_align.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/roi_align.h"
#include "feature_pyramid.h"
#include "task_runners.h"

namespace opbridge {
namespace {

using testing::Pyramid;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(MmdetRoiLevel, FollowsMapRoiLevels) {
  // finest_scale 56, 4 levels: scale < 112 level 0, < 224 level 1, < 448 level 2, else 3.
  EXPECT_EQ(MmdetRoiLevel(0.0f, 56, 4), 0);  // log2(1e-6) < 0: clamped to the finest
  EXPECT_EQ(MmdetRoiLevel(56.0f, 56, 4), 0);
  EXPECT_EQ(MmdetRoiLevel(111.0f, 56, 4), 0);
  EXPECT_EQ(MmdetRoiLevel(112.0f, 56, 4), 1);
  EXPECT_EQ(MmdetRoiLevel(223.9f, 56, 4), 1);
  EXPECT_EQ(MmdetRoiLevel(224.0f, 56, 4), 2);
  EXPECT_EQ(MmdetRoiLevel(448.0f, 56, 4), 3);
  EXPECT_EQ(MmdetRoiLevel(1e30f, 56, 4), 3);  // clamped to the coarsest
  EXPECT_EQ(MmdetRoiLevel(kInf, 56, 4), 3);
  EXPECT_EQ(MmdetRoiLevel(kNaN, 56, 4), -1);
  EXPECT_EQ(MmdetRoiLevel(std::sqrt(-4.0f), 56, 4), -1);  // a negative area (one side inverted)
  EXPECT_EQ(MmdetRoiLevel(5000.0f, 56, 1), 0);
  EXPECT_EQ(MmdetRoiLevel(64.0f, 1, 10), 6);  // finest_scale 1: log2 of the scale
}

TEST(MmdetRoiLevel, TheEpsilonLiftsScalesJustBelowABoundary) {
  // In float32, scale / 56 one ulp below 2 plus 1e-6 is above 2: level 1, as in mmdet.
  const float below = std::nextafter(112.0f, 0.0f);
  EXPECT_LT(below / 56.0f, 2.0f);
  EXPECT_EQ(MmdetRoiLevel(below, 56, 4), 1);
  // 1e-4 relative below the boundary is beyond the epsilon: level 0.
  EXPECT_EQ(MmdetRoiLevel(112.0f * (1.0f - 1e-4f), 56, 4), 0);
  EXPECT_EQ(MmdetRoiLevel(std::nextafter(224.0f, 0.0f), 56, 4), 2);
}

TEST(MmdetRoiRescale, ScalesTheSidesAboutTheCentre) {
  const float box[4] = {0.0f, 10.0f, 10.0f, 30.0f};
  float out[4];
  MmdetRoiRescale(box, 2.0f, out);
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{-5.0f, 0.0f, 15.0f, 40.0f}));
  MmdetRoiRescale(box, 0.5f, out);
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{2.5f, 15.0f, 7.5f, 25.0f}));
}

MultiLevelRoiAlignParams Params(size_t levels, int64_t pool_mode, float roi_scale_factor, int64_t aligned = 1) {
  const std::vector<float> strides = {4.0f, 8.0f, 16.0f, 32.0f};
  MultiLevelRoiAlignParams p;
  const std::vector<float> first(strides.begin(), strides.begin() + levels);
  EXPECT_TRUE(MakeMultiLevelRoiAlignParams(3, 4, pool_mode, 0, first, roi_scale_factor, 56, aligned, &p).ok());
  return p;
}

Pyramid MakePyramid(size_t count, int64_t batch, int64_t channels) {
  return testing::MakePyramid(count, batch, channels, 7);
}

// Boxes of levels 0 to 3 (and beyond, clamped), a NaN box, and one with an inverted side.
const std::vector<float> kRois = {0, 10, 10, 60, 40,    1, 0, 0, 150, 180,    0, 20, 5, 300, 190,
                                  1, 3, 3, 340, 380,    0, 40, 30, 42, 31,    1, kNaN, 0, 5, 5,
                                  0, 50, 10, 20, 60};

TEST(MultiLevelRoiAlign, PoolsEachRoiAsRoiAlignAtItsLevel) {
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 5), row = channels * 12;
  const Pyramid pyramid = MakePyramid(4, batch, channels);
  for (int64_t pool_mode : {0, 1}) {
    for (float factor : {-1.0f, 1.0f, 1.5f}) {
      const auto p = Params(4, pool_mode, factor);
      std::vector<float> out(num_rois * row, -1.0f);
      HeapScratchAllocator heap;
      ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                          out.data(), heap, SerialTaskRunner()).ok());
      for (int64_t r = 0; r < num_rois; ++r) {
        const float* roi = kRois.data() + 5 * r;
        const int64_t l = MmdetRoiLevel(std::sqrt((roi[3] - roi[1]) * (roi[4] - roi[2])), 56, 4);
        std::vector<float> expected(row, 0.0f);  // no level: a zero row
        if (l >= 0) {
          float box[5] = {roi[0], roi[1], roi[2], roi[3], roi[4]};
          if (factor == 1.5f) MmdetRoiRescale(roi + 1, factor, box + 1);
          RoiAlignParams single = p.roi_align;
          single.spatial_scale = 1.0f / p.featmap_strides[l];
          ASSERT_TRUE(cpu::RoiAlign(single, pyramid.levels[l].data, batch, channels, pyramid.levels[l].height,
                                    pyramid.levels[l].width, box, 1, expected.data(), SerialTaskRunner()).ok());
        }
        for (int64_t k = 0; k < row; ++k) EXPECT_EQ(out[r * row + k], expected[k]) << r << " " << k;
      }
      EXPECT_TRUE(std::all_of(out.begin() + 5 * row, out.begin() + 7 * row, [](float v) { return v == 0.0f; }));
      std::vector<float> threaded(out.size());
      ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                          threaded.data(), heap, testing::ThreadedTaskRunner(3)).ok());
      EXPECT_EQ(threaded, out);
    }
  }
}

TEST(MultiLevelRoiAlign, OneLevelPoolsEveryRoiAsGiven) {
  // mmdet's SingleRoIExtractor with one map: no mapper (the NaN box pools to RoIAlign's NaN row,
  // the inverted one is pooled) and no rescaling.
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 5), row = channels * 12;
  const Pyramid pyramid = MakePyramid(1, batch, channels);
  const auto p = Params(1, 1, 2.0f, 0);
  std::vector<float> out(num_rois * row), expected(num_rois * row);
  HeapScratchAllocator heap;
  ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois, out.data(),
                                      heap, SerialTaskRunner()).ok());
  RoiAlignParams single = p.roi_align;
  single.spatial_scale = 0.25f;
  ASSERT_TRUE(cpu::RoiAlign(single, pyramid.levels[0].data, batch, channels, 96, 80, kRois.data(), num_rois,
                            expected.data(), SerialTaskRunner()).ok());
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_TRUE(out[k] == expected[k] || (std::isnan(out[k]) && std::isnan(expected[k]))) << k;
  }
  EXPECT_TRUE(std::isnan(out[5 * row]));
}

TEST(MultiLevelRoiAlign, ReportsTheRoiOfAnAbsurdGridByItsRow) {
  const int64_t channels = 1;
  const Pyramid pyramid = MakePyramid(2, 1, channels);
  MultiLevelRoiAlignParams p;
  ASSERT_TRUE(MakeMultiLevelRoiAlignParams(1, 1, 1, 0, {4.0f, 8.0f}, -1.0f, 56, 0, &p).ok());
  // Row 1 is on level 1 (scale 1e7 px) and needs a grid of 1.25e6 x 1.25e6 samples (reported as
  // the limit + 1).
  const std::vector<float> rois = {0, 0, 0, 10, 10, 0, 0, 0, 1e7f, 1e7f};
  std::vector<float> out(2);
  HeapScratchAllocator heap;
  const Status s = cpu::MultiLevelRoiAlign(p, pyramid.levels.data(), 1, channels, rois.data(), 2, out.data(), heap,
                                           SerialTaskRunner());
  EXPECT_NE(s.message().find("roi 1 needs a 1048577x1048577 sampling grid"), std::string::npos) << s.message();
}

TEST(MultiLevelRoiAlignParams, RejectBadValuesAndShapes) {
  MultiLevelRoiAlignParams p;
  auto make = [&p](int64_t out_h, int64_t pool_mode, std::vector<float> strides, float factor, int64_t finest,
                   int64_t aligned) {
    return MakeMultiLevelRoiAlignParams(out_h, 7, pool_mode, 2, strides, factor, finest, aligned, &p).message();
  };
  EXPECT_EQ(make(7, 0, {}, -1, 56, 0), "featmap_strides must list one stride per feature map, got none");
  EXPECT_EQ(make(7, 0, std::vector<float>(11, 4.0f), -1, 56, 0),
            "featmap_strides lists 11 strides; at most 10 feature maps are supported (the TensorRT plugin's limit)");
  EXPECT_EQ(make(7, 0, {4, 0}, -1, 56, 0), "featmap_strides[1] must be a finite number > 0, got 0");
  EXPECT_NE(make(7, 0, {4, 1e-40f}, -1, 56, 0).find("is too small: 1 / stride must be a finite float"),
            std::string::npos);
  EXPECT_EQ(make(7, 0, {4}, -1, 0, 0), "finest_scale must be >= 1, got 0");
  EXPECT_EQ(make(7, 0, {4}, kNaN, 56, 0), "roi_scale_factor must be a finite number (<= 0: boxes as given), got nan");
  EXPECT_NE(make(0, 0, {4}, -1, 56, 0).find("output_height and output_width must be >= 1"), std::string::npos);
  ASSERT_EQ(make(7, 0, {4, 8}, 1.0f, 56, 0), "");
  EXPECT_FALSE(p.rescale);  // a factor of 1 is mmdet's None
  EXPECT_EQ(p.roi_align.mode, RoiPoolMode::kMax);
  EXPECT_EQ(CheckMultiLevelRoiAlignShapes(p, {3, 4}, {{1, 2, 8, 8}, {1, 2, 4, 4}}).message(),
            "rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape [3, 4]");
  EXPECT_EQ(CheckMultiLevelRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}}).message(),
            "the node has 1 feature maps but featmap_strides lists 2 strides; they must agree (one stride per map)");
  EXPECT_EQ(CheckMultiLevelRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}, {1, 3, 4, 4}}).message(),
            "feature map 1 has shape [1, 3, 4, 4]; every map must have the N and C of map 0, [1, 2, 8, 8]");
  EXPECT_EQ(CheckMultiLevelRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}, {2, 4, 4}}).message(),
            "feature map 1 must have rank 4 [N, C, H, W], got shape [2, 4, 4]");
  EXPECT_TRUE(CheckMultiLevelRoiAlignShapes(p, {0, 5}, {{1, 2, 8, 8}, {1, 2, 0, 4}}).ok());
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// Each thread of the CUDA kernel maps its RoI to a level and pools its element there
// (shared::LeveledRoiAlignElement); the CPU kernel groups the RoIs by level. Same values bit for bit
// (the same samples, weights and separable sums), zero rows for RoIs without a level, and with one map every RoI pooled as given (the NaN box to NaN).
shared::RoiLeveling MmdetLeveling(const MultiLevelRoiAlignParams& p) {
  shared::RoiLeveling leveling{};
  leveling.kind = shared::RoiLeveling::kMmdet;
  leveling.finest_scale = p.finest_scale;
  leveling.rescale = p.rescale;
  leveling.roi_scale_factor = p.roi_scale_factor;
  return leveling;
}

TEST(MultiLevelRoiAlignDeviceCode, MatchesTheCpuKernel) {
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 5), row = channels * 12;
  for (size_t levels : {1, 4}) {
    const Pyramid pyramid = MakePyramid(levels, batch, channels);
    for (int64_t pool_mode : {0, 1}) {
      for (float factor : {-1.0f, 1.5f}) {
        for (int64_t aligned : {0, 1}) {
          const auto p = Params(levels, pool_mode, factor, aligned);
          std::vector<float> cpu(num_rois * row);
          HeapScratchAllocator heap;
          ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                              cpu.data(), heap, SerialTaskRunner()).ok());
          const auto device = testing::RunLeveledRoiAlignDeviceCode(p.roi_align, pyramid.levels, p.spatial_scales,
                                                                    MmdetLeveling(p), batch, channels, kRois);
          for (size_t k = 0; k < cpu.size(); ++k) {
            ASSERT_TRUE(testing::SameValue(cpu[k], device[k], 0.0f))
                << levels << " levels, mode " << pool_mode << ", factor " << factor << ", aligned " << aligned
                << ": element " << k << " " << cpu[k] << " vs " << device[k];
          }
        }
      }
    }
  }
}

// In half storage the CPU kernel and the device code give the same bits, and those are the float32
// kernel's outputs on the half values (maps and RoIs), rounded once: the level, the rescale and the
// pooling see the RoIs' half values.
template <class T>
void CheckHalfStorage() {
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 5), row = channels * 12;
  const std::vector<T> rois = testing::StoredAs<T>(kRois);
  const std::vector<float> rounded_rois = testing::FloatsOf(rois);
  for (size_t levels : {1, 4}) {
    const auto stored = testing::StorePyramid<T>(MakePyramid(levels, batch, channels));
    for (int64_t pool_mode : {0, 1}) {
      for (float factor : {-1.0f, 1.5f}) {
        const auto p = Params(levels, pool_mode, factor);
        std::vector<T> cpu(num_rois * row);
        std::vector<float> float32(num_rois * row);
        HeapScratchAllocator heap;
        ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, stored.levels.data(), batch, channels, rois.data(), num_rois,
                                            cpu.data(), heap, SerialTaskRunner()).ok());
        ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, stored.rounded.levels.data(), batch, channels, rounded_rois.data(),
                                            num_rois, float32.data(), heap, SerialTaskRunner()).ok());
        const auto device = testing::RunLeveledRoiAlignDeviceCode(p.roi_align, stored.levels, p.spatial_scales,
                                                                  MmdetLeveling(p), batch, channels, rois);
        std::vector<T> threaded(cpu.size());
        ASSERT_TRUE(cpu::MultiLevelRoiAlign(p, stored.levels.data(), batch, channels, rois.data(), num_rois,
                                            threaded.data(), heap, testing::ThreadedTaskRunner(3)).ok());
        testing::ExpectFloat32RoundedOnce(cpu, float32, {&device, &threaded},
                                          std::to_string(levels) + " levels, mode " + std::to_string(pool_mode) +
                                              ", factor " + std::to_string(factor));
      }
    }
  }
}

TEST(MultiLevelRoiAlignDeviceCode, Float16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::Float16>();
}

TEST(MultiLevelRoiAlignDeviceCode, BFloat16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::BFloat16>();
}

TEST(MultiLevelRoiAlignDeviceCode, BadBatchIndicesGiveNanRows) {
  // The CPU op reports these (CheckRoiAlignRois); the kernel cannot, without a synchronization.
  const Pyramid pyramid = MakePyramid(2, 1, 1);
  const auto p = Params(2, 1, -1.0f);
  // The fourth has no level (a NaN side) but a bad batch index: NaN too, not a zero row.
  const std::vector<float> rois = {1, 0, 0, 10, 10,  kNaN, 0, 0, 10, 10,  0, 0, 0, 10, 10,  3, 0, 0, kNaN, 10};
  const auto device = testing::RunLeveledRoiAlignDeviceCode(p.roi_align, pyramid.levels, p.spatial_scales,
                                                            MmdetLeveling(p), 1, 1, rois);
  for (size_t k = 0; k < 24; ++k) EXPECT_TRUE(std::isnan(device[k])) << k;
  for (size_t k = 24; k < 36; ++k) EXPECT_FALSE(std::isnan(device[k])) << k;
  for (size_t k = 36; k < 48; ++k) EXPECT_TRUE(std::isnan(device[k])) << k;
}

TEST(MultiLevelRoiAlignDeviceCode, AnEmptyBatchGivesNanRowsWithoutReadingTheMaps) {
  // Batch 0: the maps have no values (null data); a batch index of -0.5 must not read image 0.
  const Pyramid pyramid = MakePyramid(2, 0, 1);
  const auto p = Params(2, 1, -1.0f);
  const std::vector<float> rois = {-0.5f, 0, 0, 10, 10,  0, 0, 0, 100, 100};
  const auto device = testing::RunLeveledRoiAlignDeviceCode(p.roi_align, pyramid.levels, p.spatial_scales,
                                                            MmdetLeveling(p), 0, 1, rois);
  ASSERT_EQ(device.size(), 24u);
  for (float v : device) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace opbridge
