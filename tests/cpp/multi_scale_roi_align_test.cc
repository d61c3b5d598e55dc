// Multi-scale RoIAlign kernel tests: torchvision's level mapper on hand-worked boxes, each level
// pooled exactly as RoIAlign pools it, and thread independence. The sweeps against torchvision's
// MultiScaleRoIAlign are in tests/python/test_multi_scale_roi_align.py.
#include "kernels/cpu/multi_scale_roi_align.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "feature_pyramid.h"
#include "kernels/cpu/roi_align.h"
#include "task_runners.h"

namespace opbridge {
namespace {

MultiScaleRoiAlignParams Params(std::vector<float> scales, int64_t sampling_ratio = 2) {
  MultiScaleRoiAlignParams p;
  EXPECT_TRUE(MakeMultiScaleRoiAlignParams(7, 7, sampling_ratio, 0, scales, 224, 4, &p).ok());
  return p;
}

int64_t Level(const MultiScaleRoiAlignParams& p, float x1, float y1, float x2, float y2) {
  const float box[4] = {x1, y1, x2, y2};
  return MultiScaleRoiLevel(p, box);
}

TEST(MultiScaleRoiLevel, FollowsTheFpnLevelMapper) {
  // Scales 1/4 .. 1/32: levels 2 .. 5, counted from level 2.
  const auto p = Params({0.25f, 0.125f, 0.0625f, 0.03125f});
  EXPECT_EQ(p.k_min, 2);
  EXPECT_EQ(p.k_max, 5);
  EXPECT_EQ(Level(p, 0, 0, 224, 224), 2);    // the canonical box: level 4
  EXPECT_EQ(Level(p, 10, 10, 122, 122), 1);  // half the size: level 3
  EXPECT_EQ(Level(p, 0, 0, 448, 448), 3);    // twice: level 5
  EXPECT_EQ(Level(p, 0, 0, 4, 4), 0);        // tiny: clamped to level 2
  EXPECT_EQ(Level(p, 0, 0, 5000, 5000), 3);  // huge: clamped to level 5
  EXPECT_EQ(Level(p, 0, 0, 0, 0), 0);        // zero area: log2(0) is -inf, clamped to the finest
  EXPECT_EQ(Level(p, 0, 0, std::numeric_limits<float>::quiet_NaN(), 10), -1);  // no level: a zero row
  // Just below a level boundary (sqrt(area) = 111.9 < 112) stays on the finer level.
  EXPECT_EQ(Level(p, 0, 0, 111.9f, 111.9f), 0);
}

TEST(MultiScaleRoiLevel, ClampsAsTorchWhenTheScalesDoNotDescend) {
  // k_min = 5 > k_max = 2: torch.clamp(x, 5, 2) is 2 for every x, index 2 - 5 < 0: no level.
  const auto p = Params({0.03125f, 0.25f});
  EXPECT_EQ(Level(p, 0, 0, 224, 224), -1);
}

TEST(MultiScaleRoiAlign, PoolsEachRoiAsRoiAlignAtItsLevel) {
  const std::vector<float> scales = {0.25f, 0.125f, 0.0625f};
  const auto p = Params(scales);
  const int64_t batch = 2, channels = 3;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> maps;
  std::vector<cpu::FeatureLevel<float>> levels;
  for (int64_t l = 0; l < 3; ++l) {
    const int64_t h = 64 >> l, w = 48 >> l;
    maps.emplace_back(batch * channels * h * w);
    for (auto& v : maps.back()) v = normal(rng);
  }
  for (int64_t l = 0; l < 3; ++l) levels.push_back({maps[l].data(), 64 >> l, 48 >> l});
  // Boxes of every level, and one NaN box.
  std::vector<float> rois = {0, 10, 10, 40, 30,    1, 0, 0, 150, 180,    0, 20, 5, 140, 90,
                             1, 3, 3, 200, 250,    0, std::numeric_limits<float>::quiet_NaN(), 0, 5, 5};
  const int64_t num_rois = 5, row = channels * 49;
  std::vector<float> out(num_rois * row, -1.0f);
  HeapScratchAllocator heap;
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, levels.data(), batch, channels, rois.data(), num_rois, out.data(), heap,
                                      SerialTaskRunner()).ok());
  for (int64_t r = 0; r < num_rois; ++r) {
    const int64_t l = MultiScaleRoiLevel(p, rois.data() + 5 * r + 1);
    std::vector<float> expected(row, 0.0f);
    if (l >= 0) {
      RoiAlignParams single = p.roi_align;
      single.spatial_scale = scales[l];
      ASSERT_TRUE(cpu::RoiAlign(single, levels[l].data, batch, channels, levels[l].height, levels[l].width,
                                rois.data() + 5 * r, 1, expected.data(), SerialTaskRunner()).ok());
    }
    for (int64_t k = 0; k < row; ++k) EXPECT_EQ(out[r * row + k], expected[k]) << r << " " << k;
  }
  std::vector<float> threaded(out.size());
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, levels.data(), batch, channels, rois.data(), num_rois, threaded.data(), heap,
                                      testing::ThreadedTaskRunner(3)).ok());
  EXPECT_EQ(threaded, out);
}

TEST(MultiScaleRoiAlignParams, RejectBadValuesAndShapes) {
  MultiScaleRoiAlignParams p;
  EXPECT_NE(MakeMultiScaleRoiAlignParams(7, 7, 2, 0, {}, 224, 4, &p).message().find("spatial_scales"), std::string::npos);
  EXPECT_NE(MakeMultiScaleRoiAlignParams(7, 7, 2, 0, {0.25f, 0.0f}, 224, 4, &p).message()
                .find("spatial_scales[1] must be a finite number > 0, got 0"), std::string::npos);
  EXPECT_NE(MakeMultiScaleRoiAlignParams(7, 7, 2, 0, {0.25f}, 0, 4, &p).message().find("canonical_scale"),
            std::string::npos);
  EXPECT_NE(MakeMultiScaleRoiAlignParams(7, 0, 2, 0, {0.25f}, 224, 4, &p).message().find("output_height and output_width"),
            std::string::npos);
  ASSERT_TRUE(MakeMultiScaleRoiAlignParams(7, 7, 2, 0, {0.25f, 0.125f}, 224, 4, &p).ok());
  EXPECT_NE(CheckMultiScaleRoiAlignShapes(p, {3, 4}, {{1, 2, 8, 8}, {1, 2, 4, 4}}).message().find("rois"), std::string::npos);
  EXPECT_NE(CheckMultiScaleRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}}).message().find("1 feature maps but spatial_scales lists 2"),
            std::string::npos);
  EXPECT_NE(CheckMultiScaleRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}, {1, 3, 4, 4}}).message().find("feature map 1"),
            std::string::npos);
  EXPECT_NE(CheckMultiScaleRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}, {2, 4, 4}}).message().find("rank 4"), std::string::npos);
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// The CUDA kernel's threads map their RoI with torchvision's LevelMapper themselves
// (shared::LeveledRoiAlignElement): the CPU kernel's values bit for bit (the same separable sums), zero rows for RoIs without a level, also for a pyramid of more maps than one launch
// takes (12: two launches, each writing the rows of its maps' RoIs).
void ExpectDeviceCodeMatchesCpu(const std::vector<float>& scales, const std::vector<int64_t>& sides,
                                const std::vector<float>& rois) {
  const auto p = Params(scales);
  const int64_t batch = 2, channels = 2, num_rois = static_cast<int64_t>(rois.size() / 5);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> maps;
  std::vector<cpu::FeatureLevel<float>> levels;
  for (int64_t side : sides) {
    maps.emplace_back(batch * channels * side * side);
    for (auto& v : maps.back()) v = normal(rng);
    levels.push_back({maps.back().data(), side, side});
  }
  std::vector<float> cpu(num_rois * channels * 49);
  HeapScratchAllocator heap;
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, levels.data(), batch, channels, rois.data(), num_rois, cpu.data(), heap,
                                      SerialTaskRunner()).ok());
  shared::RoiLeveling leveling{};
  leveling.kind = shared::RoiLeveling::kTorchvision;
  leveling.torchvision = LevelMapperOf(p);
  const auto device =
      testing::RunLeveledRoiAlignDeviceCode(p.roi_align, levels, scales, leveling, batch, channels, rois);
  for (size_t k = 0; k < cpu.size(); ++k) {
    ASSERT_TRUE(testing::SameValue(cpu[k], device[k], 0.0f)) << k << ": " << cpu[k] << " vs " << device[k];
  }
}

TEST(MultiScaleRoiAlignDeviceCode, MatchesTheCpuKernel) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectDeviceCodeMatchesCpu({0.25f, 0.125f, 0.0625f}, {64, 32, 16},
                             {0, 10, 10, 40, 30,   1, 0, 0, 150, 180,   0, 20, 5, 140, 90,
                              1, 3, 3, 200, 250,   0, nan, 0, 5, 5,    1, 50, 50, 20, 20});
}

TEST(MultiScaleRoiAlignDeviceCode, TakesMoreMapsThanOneLaunch) {
  std::vector<float> scales;
  std::vector<int64_t> sides;
  for (int l = 1; l <= 12; ++l) {
    scales.push_back(std::ldexp(1.0f, -l));
    sides.push_back(std::max(2, 96 >> l));
  }
  std::vector<float> rois;
  for (int k = 0; k < 14; ++k) {  // sqrt(area) from 14 to 14 * 2^13: levels 1 (clamped) to 12 (clamped)
    const float side = 14.0f * std::ldexp(1.0f, k);
    rois.insert(rois.end(), {static_cast<float>(k % 2), 3.0f, 5.0f, 3.0f + side, 5.0f + side});
  }
  rois.insert(rois.end(), {0, std::numeric_limits<float>::quiet_NaN(), 0, 1, 1});  // no level
  ExpectDeviceCodeMatchesCpu(scales, sides, rois);
}

// In half storage the CPU kernel and the device code give the same bits, and those are the float32
// kernel's outputs on the half values (maps and RoIs), rounded once: the level mapper and the pooling
// see the RoIs' half values. Boxes near the level boundaries (sqrt(area) 112 and 224) are among them,
// where the half rounding of a coordinate can move a box to another level.
template <class T>
void CheckHalfStorage() {
  const std::vector<float> scales = {0.25f, 0.125f, 0.0625f};
  const auto p = Params(scales);
  const int64_t batch = 2, channels = 2;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> boxes = {0, 10, 10, 40, 30,   1, 0, 0, 150, 180,   0, 20, 5, 140, 90,
                                    1, 3, 3, 200, 250,   0, nan, 0, 5, 5,    1, 50, 50, 20, 20,
                                    0, 0.3f, 0.7f, 112.1f, 111.9f,   1, 1.1f, 2.9f, 225.3f, 226.9f};
  const std::vector<T> rois = testing::StoredAs<T>(boxes);
  const std::vector<float> rounded_rois = testing::FloatsOf(rois);
  const int64_t num_rois = static_cast<int64_t>(boxes.size() / 5);
  const auto stored = testing::StorePyramid<T>(testing::MakePyramid(scales.size(), batch, channels, 13));
  std::vector<T> cpu(num_rois * channels * 49), threaded(cpu.size());
  std::vector<float> float32(cpu.size());
  HeapScratchAllocator heap;
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, stored.levels.data(), batch, channels, rois.data(), num_rois, cpu.data(),
                                      heap, SerialTaskRunner()).ok());
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, stored.rounded.levels.data(), batch, channels, rounded_rois.data(),
                                      num_rois, float32.data(), heap, SerialTaskRunner()).ok());
  ASSERT_TRUE(cpu::MultiScaleRoiAlign(p, stored.levels.data(), batch, channels, rois.data(), num_rois,
                                      threaded.data(), heap, testing::ThreadedTaskRunner(3)).ok());
  shared::RoiLeveling leveling{};
  leveling.kind = shared::RoiLeveling::kTorchvision;
  leveling.torchvision = LevelMapperOf(p);
  const auto device =
      testing::RunLeveledRoiAlignDeviceCode(p.roi_align, stored.levels, scales, leveling, batch, channels, rois);
  testing::ExpectFloat32RoundedOnce(cpu, float32, {&device, &threaded});
}

TEST(MultiScaleRoiAlignDeviceCode, Float16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::Float16>();
}

TEST(MultiScaleRoiAlignDeviceCode, BFloat16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::BFloat16>();
}

}  // namespace
}  // namespace opbridge
