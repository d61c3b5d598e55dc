// RoIAlign over a feature pyramid, per output element, for the CUDA kernels of the multi-level
// RoIAlign ops (host-and-device): torchvision's MultiScaleRoIAlign and mmdet's SingleRoIExtractor
// (opbridge::MultiLevelRoiAlign). Each RoI gets its level from the op's mapper (and mmdet's
// optional rescale), then its bins are RoIAlign's at that level's scale; a RoI without a level gets
// a zero row, as both frameworks' outputs start as zeros. The CPU kernels group the RoIs by level
// and pool each group with the RoIAlign kernel: the same values.
#pragma once

#include <stdint.h>

#include "core/roi_align.h"
#include "core/host_device.h"
#include "kernels/shared/roi_align_sampling.h"
#include "core/roi_levels.h"

namespace opbridge::shared {

// The maps one launch reads: mmdeploy's plugin limit (kMultiLevelRoiAlignMaxLevels); a
// MultiScaleRoiAlign node with more maps takes one launch per kMaxFeatureMaps of them.
constexpr int kMaxFeatureMaps = 10;

// Feature maps first .. first + count - 1 of a node's `total`, by value (a kernel argument):
// [batch, channels, height[l], width[l]] each, in storage type T (float, Float16 or BFloat16).
template <class T>
struct FeatureMaps {
  const T* data[kMaxFeatureMaps];
  int64_t height[kMaxFeatureMaps], width[kMaxFeatureMaps];
  float spatial_scale[kMaxFeatureMaps];
  int64_t first, count, total;
};

// Maps first .. first + kMaxFeatureMaps - 1 (at most) of a node's `total` maps, for one launch:
// map l is data[l] [batch, channels, heights[l], widths[l]], pooled at scales[l].
template <class T>
inline FeatureMaps<T> FeatureMapsFrom(int64_t first, int64_t total, const T* const* data, const int64_t* heights,
                                      const int64_t* widths, const float* scales) {
  FeatureMaps<T> maps{};
  maps.first = first;
  maps.count = Min<int64_t>(kMaxFeatureMaps, total - first);
  maps.total = total;
  for (int64_t l = 0; l < maps.count; ++l) {
    maps.data[l] = data[first + l];
    maps.height[l] = heights[first + l];
    maps.width[l] = widths[first + l];
    maps.spatial_scale[l] = scales[first + l];
  }
  return maps;
}

// How a RoI gets its level.
struct RoiLeveling {
  enum Kind { kTorchvision, kMmdet } kind;
  TorchvisionLevelMapper torchvision;  // kTorchvision
  int64_t finest_scale;                // kMmdet: map_roi_levels, unless there is one map
  bool rescale;                        // kMmdet: roi_rescale by roi_scale_factor
  float roi_scale_factor;
};

// The level of RoI row `roi` (batch_index, x1, y1, x2, y2; float32), or -1; with mmdet's rescale,
// the box to pool goes to `pooled` (else `roi` is copied there).
OPBRIDGE_HD inline int64_t RoiLevelOf(const RoiLeveling& leveling, int64_t num_maps, const float* roi, float pooled[5]) {
  for (int k = 0; k < 5; ++k) pooled[k] = roi[k];
  if (leveling.kind == RoiLeveling::kTorchvision) return TorchvisionRoiLevel(leveling.torchvision, roi + 1);
  if (num_maps == 1) return 0;  // mmdet's extractor skips the mapper and the rescale
  const int64_t level = MmdetRoiLevel(MmdetBoxScale(roi), leveling.finest_scale, num_maps);
  if (level >= 0 && leveling.rescale) MmdetRoiRescale(roi + 1, leveling.roi_scale_factor, pooled + 1);
  return level;
}

// The plan of RoI row `roi` (batch_index, x1, y1, x2, y2, stored as R: float, Float16 or BFloat16)
// for the launch over `maps`: RoIAlign's plan at its level's scale (MakeRoiPlan, with map = the
// level's index among `maps`), kSkip when its level is among another launch's maps, and for a RoI
// without a level kZero in the launch of the first maps (kSkip in the others). p's spatial_scale is
// replaced by the level's. Half RoIs are read as the floats they are, as the CPU kernels read them.
template <class T, class R>
OPBRIDGE_HD inline RoiPlan MakeLeveledRoiPlan(RoiAlignParams p, const FeatureMaps<T>& maps,
                                              const RoiLeveling& leveling, int64_t batch, const R* stored_roi) {
  RoiPlan plan{};
  plan.kind = RoiPlan::kSkip;
  float roi[5];
  for (int k = 0; k < 5; ++k) roi[k] = Load(stored_roi + k);
  // The CPU ops check every RoI's batch index before anything else: a bad one is a NaN row (written
  // by the first launch), whether or not the RoI has a level.
  if (!IsRoiBatchIndex(roi[0], batch)) {
    if (maps.first == 0) plan.kind = RoiPlan::kNan;
    return plan;
  }
  float pooled[5];
  const int64_t level = RoiLevelOf(leveling, maps.total, roi, pooled);
  if (level < 0) {
    if (maps.first == 0) plan.kind = RoiPlan::kZero;
    return plan;
  }
  const int64_t l = level - maps.first;
  if (l < 0 || l >= maps.count) return plan;
  p.spatial_scale = maps.spatial_scale[l];
  plan = MakeRoiPlan(p, pooled, batch);
  plan.map = static_cast<int32_t>(l);
  return plan;
}

// What the CUDA kernel's thread for output element `index` of [num_rois, channels, out_h, out_w]
// writes in the launch over `maps`, the RoIs' plans (MakeLeveledRoiPlan) made: nothing for kSkip.
// Index must hold the element count and every map's height * width. The output is of the maps'
// storage type T: the float32 value, rounded once.
template <class Index, class T>
OPBRIDGE_HD inline void LeveledRoiAlignElement(const RoiAlignParams& p, const RoiPlan* plans,
                                               const FeatureMaps<T>& maps, int64_t channels, Index index, T* output) {
  const auto e = RoiElementOf<Index>(static_cast<Index>(p.output_height * p.output_width),
                                     static_cast<Index>(channels), index);
  const RoiPlan& plan = plans[e.roi];
  if (plan.kind == RoiPlan::kSkip) return;
  const int l = plan.kind == RoiPlan::kPool ? plan.map : 0;
  Store(output + index, RoiPlanValue<Index>(p, plan, maps.data[l], channels, static_cast<Index>(maps.height[l]),
                                            static_cast<Index>(maps.width[l]), e.channel, e.bin));
}

}  // namespace opbridge::shared
