// Multi-level rotated RoIAlign kernel tests: mmrotate's rescale, each RoI pooled exactly as
// RoIAlignRotated pools its (rescaled) box at the level mmrotate's mapper picks on sqrt(w * h),
// zero rows for RoIs without a level, and thread independence. The sweeps against a float64
// reference are in tests/python/test_multi_level_rotated_roi_align.py.
#include "kernels/cpu/multi_level_rotated_roi_align.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/roi_align_rotated.h"
#include "feature_pyramid.h"
#include "kernels/shared/roi_align_rotated_grid.h"
#include "task_runners.h"

namespace opbridge {
namespace {

using testing::Pyramid;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(MmrotateRoiRescale, ScalesWidthAndHeightOnly) {
  const float box[5] = {10.0f, 20.0f, 8.0f, 6.0f, 0.5f};
  float out[5];
  MmrotateRoiRescale(box, 1.5f, out);
  EXPECT_EQ(std::vector<float>(out, out + 5), (std::vector<float>{10.0f, 20.0f, 12.0f, 9.0f, 0.5f}));
}

MultiLevelRotatedRoiAlignParams Params(size_t levels, float roi_scale_factor, int64_t aligned, int64_t clockwise) {
  const std::vector<float> strides = {4.0f, 8.0f, 16.0f, 32.0f};
  MultiLevelRotatedRoiAlignParams p;
  const std::vector<float> first(strides.begin(), strides.begin() + levels);
  EXPECT_TRUE(
      MakeMultiLevelRotatedRoiAlignParams(3, 4, clockwise, 0, first, roi_scale_factor, 56, aligned, &p).ok());
  return p;
}

Pyramid MakePyramid(size_t count, int64_t batch, int64_t channels) {
  return testing::MakePyramid(count, batch, channels, 11);
}

// Rotated boxes of levels 0 to 3 (and beyond, clamped), a NaN box, and one with a negative width.
const std::vector<float> kRois = {0, 30, 20, 50, 30, 0.3f,     1, 80, 90, 150, 180, -1.2f,
                                  0, 160, 100, 280, 185, 2.0f, 1, 170, 190, 500, 450, 7.0f,
                                  0, 40, 30, 2, 1, 0.0f,       1, 10, 0, kNaN, 5, 0.0f,
                                  0, 50, 10, -20, 60, 0.1f};

bool SameOrBothNaN(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

TEST(MultiLevelRotatedRoiAlign, PoolsEachRoiAsRoiAlignRotatedAtItsLevel) {
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 6), row = channels * 12;
  const Pyramid pyramid = MakePyramid(4, batch, channels);
  for (int64_t aligned : {0, 1}) {
    for (float factor : {-1.0f, 1.0f, 1.5f}) {
      const auto p = Params(4, factor, aligned, 1);
      std::vector<float> out(num_rois * row, -1.0f);
      HeapScratchAllocator heap;
      ASSERT_TRUE(cpu::MultiLevelRotatedRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                                 out.data(), heap, SerialTaskRunner()).ok());
      std::vector<int64_t> used;
      for (int64_t r = 0; r < num_rois; ++r) {
        const float* roi = kRois.data() + 6 * r;
        const int64_t l = MmdetRoiLevel(std::sqrt(roi[3] * roi[4]), 56, 4);
        used.push_back(l);
        std::vector<float> expected(row, 0.0f);  // no level: a zero row
        if (l >= 0) {
          std::vector<float> box(roi, roi + 6);
          if (factor == 1.5f) MmrotateRoiRescale(roi + 1, factor, box.data() + 1);
          RoiAlignRotatedParams single = p.roi_align;
          single.spatial_scale = 1.0f / p.featmap_strides[l];
          ASSERT_TRUE(cpu::RoiAlignRotated(single, pyramid.levels[l].data, batch, channels, pyramid.levels[l].height,
                                           pyramid.levels[l].width, box.data(), 1, expected.data(), heap,
                                           SerialTaskRunner()).ok());
        }
        for (int64_t k = 0; k < row; ++k) EXPECT_TRUE(SameOrBothNaN(out[r * row + k], expected[k])) << r << " " << k;
      }
      EXPECT_EQ(used, (std::vector<int64_t>{0, 1, 2, 3, 0, -1, -1}));
      std::vector<float> threaded(out.size());
      ASSERT_TRUE(cpu::MultiLevelRotatedRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                                 threaded.data(), heap, testing::ThreadedTaskRunner(3)).ok());
      for (size_t k = 0; k < out.size(); ++k) EXPECT_TRUE(SameOrBothNaN(threaded[k], out[k])) << k;
    }
  }
}

TEST(MultiLevelRotatedRoiAlign, OneLevelPoolsEveryRoiAsGiven) {
  // mmrotate's extractor with one map: no mapper (the NaN box pools to RoIAlignRotated's NaN row,
  // the negative-width one is pooled) and no rescaling.
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 6), row = channels * 12;
  const Pyramid pyramid = MakePyramid(1, batch, channels);
  const auto p = Params(1, 2.0f, 0, 0);
  std::vector<float> out(num_rois * row), expected(num_rois * row);
  HeapScratchAllocator heap;
  ASSERT_TRUE(cpu::MultiLevelRotatedRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                             out.data(), heap, SerialTaskRunner()).ok());
  RoiAlignRotatedParams single = p.roi_align;
  single.spatial_scale = 0.25f;
  ASSERT_TRUE(cpu::RoiAlignRotated(single, pyramid.levels[0].data, batch, channels, 96, 80, kRois.data(), num_rois,
                                   expected.data(), heap, SerialTaskRunner()).ok());
  for (size_t k = 0; k < out.size(); ++k) EXPECT_TRUE(SameOrBothNaN(out[k], expected[k])) << k;
  EXPECT_TRUE(std::isnan(out[5 * row]));
  EXPECT_NE(out[6 * row], 0.0f);
}

TEST(MultiLevelRotatedRoiAlign, ReportsTheRoiOfAnAbsurdGridByItsRow) {
  const Pyramid pyramid = MakePyramid(2, 1, 1);
  MultiLevelRotatedRoiAlignParams p;
  ASSERT_TRUE(MakeMultiLevelRotatedRoiAlignParams(1, 1, 0, 0, {4.0f, 8.0f}, -1.0f, 56, 0, &p).ok());
  // Row 1 is on level 1 (scale 1e7 px) and needs a grid of 1.25e6 x 1.25e6 samples (reported as
  // the limit + 1).
  const std::vector<float> rois = {0, 5, 5, 10, 10, 0, 0, 0, 0, 1e7f, 1e7f, 0};
  std::vector<float> out(2);
  HeapScratchAllocator heap;
  const Status s = cpu::MultiLevelRotatedRoiAlign(p, pyramid.levels.data(), 1, 1, rois.data(), 2, out.data(), heap,
                                                  SerialTaskRunner());
  EXPECT_NE(s.message().find("roi 1 needs a 1048577x1048577 sampling grid"), std::string::npos) << s.message();
}

TEST(MultiLevelRotatedRoiAlignParams, RejectBadValuesAndShapes) {
  MultiLevelRotatedRoiAlignParams p;
  auto make = [&p](int64_t out_h, int64_t clockwise, std::vector<float> strides, float factor, int64_t aligned) {
    return MakeMultiLevelRotatedRoiAlignParams(out_h, 7, clockwise, 2, strides, factor, 56, aligned, &p).message();
  };
  EXPECT_EQ(make(7, 0, {}, -1, 0), "featmap_strides must list one stride per feature map, got none");
  EXPECT_NE(make(0, 0, {4}, -1, 0).find("output_height and output_width must be >= 1"), std::string::npos);
  ASSERT_EQ(make(7, 1, {4, 8}, 1.0f, 1), "");
  EXPECT_FALSE(p.rescale);  // a factor of 1 is mmrotate's None
  EXPECT_TRUE(p.roi_align.clockwise && p.roi_align.aligned);
  EXPECT_EQ(p.spatial_scales, (std::vector<float>{0.25f, 0.125f}));
  EXPECT_EQ(CheckMultiLevelRotatedRoiAlignShapes(p, {3, 5}, {{1, 2, 8, 8}, {1, 2, 4, 4}}).message(),
            "rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, theta), got shape [3, 5]");
  EXPECT_EQ(CheckMultiLevelRotatedRoiAlignShapes(p, {3, 6}, {{1, 2, 8, 8}}).message(),
            "the node has 1 feature maps but featmap_strides lists 2 strides; they must agree (one stride per map)");
  EXPECT_TRUE(CheckMultiLevelRotatedRoiAlignShapes(p, {0, 6}, {{1, 2, 8, 8}, {1, 2, 0, 4}}).ok());
}

// The CUDA kernel (kernels/cuda/roi_align_rotated.cu, LeveledRoiAlignRotated) on the host, thread by
// thread: each RoI planned (its batch index checked first, then its level on sqrt(w * h) with one map
// meaning every RoI as given, mmrotate's rescale, the geometry at its level's scale, its sample
// limits), then each output element summing its bin's points in order; no level: a zero row.
std::vector<float> DevicePool(const MultiLevelRotatedRoiAlignParams& params, const Pyramid& pyramid, int64_t batch,
                              int64_t channels, const std::vector<float>& rois) {
  const RoiAlignRotatedParams& base = params.roi_align;
  const int64_t num_rois = static_cast<int64_t>(rois.size() / 6), maps = static_cast<int64_t>(pyramid.levels.size());
  const int64_t bins = base.output_height * base.output_width;
  std::vector<float> out(num_rois * channels * bins);
  for (int64_t r = 0; r < num_rois; ++r) {
    const float* roi = rois.data() + r * 6;
    float pooled[6];
    std::copy(roi, roi + 6, pooled);
    int64_t level = 0;
    if (maps > 1) {
      level = shared::MmdetRoiLevel(std::sqrt(roi[3] * roi[4]), params.finest_scale, maps);
      if (level >= 0 && params.rescale) MmrotateRoiRescale(roi + 1, params.roi_scale_factor, pooled + 1);
    }
    RoiAlignRotatedParams p = base;
    if (level >= 0) p.spatial_scale = params.spatial_scales[level];
    const shared::RotatedGeometry g = shared::MakeRotatedGeometry(p, pooled);
    const bool valid = shared::IsRoiBatchIndex(roi[0], batch) &&
                       (level < 0 || shared::WithinSampleBudget(g.grid_h, g.grid_w, p.output_height, p.output_width));
    for (int64_t e = 0; e < channels * bins; ++e) {
      const int64_t bin = e % bins, c = e / bins;
      float& o = out[r * channels * bins + e];
      if (!valid) {
        o = kNaN;
      } else if (level < 0) {
        o = 0.0f;
      } else if (!g.finite) {
        o = kNaN;
      } else {
        const cpu::FeatureLevel<float>& map = pyramid.levels[level];
        const float* plane = map.data + (static_cast<int64_t>(roi[0]) * channels + c) * map.height * map.width;
        float sum = 0.0f;
        for (int64_t iy = 0; iy < g.grid_h; ++iy) {
          for (int64_t ix = 0; ix < g.grid_w; ++ix) {
            const shared::BilinearTaps t =
                shared::MakeRotatedTaps(g, bin / p.output_width, bin % p.output_width, iy, ix, map.height, map.width);
            if (t.base != shared::kTapsOutside) sum += shared::BilinearSample(t, plane, map.width);
          }
        }
        o = sum / g.count;
      }
    }
  }
  return out;
}

// The GPU's values are the CPU kernel's bits: 1 to 4 maps, with and without rescale, aligned or not,
// RoIs of every level, without a level, NaN and negative sides.
TEST(MultiLevelRotatedRoiAlignDeviceCode, MatchesTheCpuKernelBitForBit) {
  const int64_t batch = 2, channels = 3, num_rois = static_cast<int64_t>(kRois.size() / 6);
  for (size_t levels : {size_t{1}, size_t{2}, size_t{4}}) {
    const Pyramid pyramid = MakePyramid(levels, batch, channels);
    for (int64_t aligned : {0, 1}) {
      for (float factor : {-1.0f, 1.5f}) {
        const auto p = Params(levels, factor, aligned, 1);
        std::vector<float> cpu(num_rois * channels * 12, -1.0f);
        HeapScratchAllocator heap;
        ASSERT_TRUE(cpu::MultiLevelRotatedRoiAlign(p, pyramid.levels.data(), batch, channels, kRois.data(), num_rois,
                                                   cpu.data(), heap, SerialTaskRunner()).ok());
        const auto device = DevicePool(p, pyramid, batch, channels, kRois);
        EXPECT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
            << levels << " maps, aligned " << aligned << ", factor " << factor;
      }
    }
  }
}

}  // namespace
}  // namespace opbridge
