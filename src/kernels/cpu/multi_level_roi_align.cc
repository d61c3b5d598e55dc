// Multi-level RoIAlign CPU kernel: mmdet's SingleRoIExtractor.forward. Every RoI gets its level
// from mmdet's mapper (on the box as given), its box is rescaled when roi_scale_factor asks for
// it, and the RoIs are grouped by level (a counting sort, so O(R) whatever the level count); each
// group is pooled by the RoIAlign kernel at its level's scale straight into its rows of the
// output. A RoI without a level keeps a zero row, as mmdet's output, which starts as zeros, does.
#include "kernels/cpu/multi_level_roi_align.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/roi_align.h"

namespace opbridge::cpu {

Status MultiLevelRoiAlign(const MultiLevelRoiAlignParams& params, const FeatureLevel* levels, int64_t batch,
                          int64_t channels, const float* rois, int64_t num_rois, float* output,
                          ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t num_levels = static_cast<int64_t>(params.featmap_strides.size());
  RoiAlignParams p = params.roi_align;
  if (num_levels == 1) {
    // mmdet pools every RoI from the one map as given: no level mapping, no rescaling.
    p.spatial_scale = params.spatial_scales[0];
    return RoiAlign(p, levels[0].data, batch, channels, levels[0].height, levels[0].width, rois, num_rois, output,
                    runner);
  }
  if (num_rois == 0) return Status::Ok();
  // The caller allocated the output, so R * C * out_h * out_w fits in int64.
  const int64_t row_size = channels * p.output_height * p.output_width;
  const size_t bytes = ArenaBytes<int64_t>(num_rois) * 2 + ArenaBytes<float>(5 * num_rois);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int64_t* level_of = arena.Take<int64_t>(num_rois);
  int64_t* rows = arena.Take<int64_t>(num_rois);     // output row of each grouped roi
  float* grouped = arena.Take<float>(5 * num_rois);  // the rois (rescaled) grouped by level

  int64_t start[kMultiLevelRoiAlignMaxLevels + 1] = {};
  for (int64_t r = 0; r < num_rois; ++r) {
    const float* roi = rois + 5 * r;
    const float scale = std::sqrt((roi[3] - roi[1]) * (roi[4] - roi[2]));
    level_of[r] = MmdetRoiLevel(scale, params.finest_scale, num_levels);
    if (level_of[r] < 0) {
      std::fill(output + r * row_size, output + (r + 1) * row_size, 0.0f);
    } else {
      ++start[level_of[r] + 1];
    }
  }
  for (int64_t l = 0; l < num_levels; ++l) start[l + 1] += start[l];
  int64_t next[kMultiLevelRoiAlignMaxLevels];
  std::copy(start, start + num_levels, next);
  for (int64_t r = 0; r < num_rois; ++r) {
    if (level_of[r] < 0) continue;
    const int64_t k = next[level_of[r]]++;
    const float* roi = rois + 5 * r;
    float* dst = grouped + 5 * k;
    dst[0] = roi[0];
    if (params.rescale) {
      MmdetRoiRescale(roi + 1, params.roi_scale_factor, dst + 1);
    } else {
      std::copy(roi + 1, roi + 5, dst + 1);
    }
    rows[k] = r;
  }
  for (int64_t l = 0; l < num_levels; ++l) {
    const int64_t count = start[l + 1] - start[l];
    if (count == 0) continue;
    p.spatial_scale = params.spatial_scales[l];
    OPBRIDGE_RETURN_IF_ERROR(RoiAlign(p, levels[l].data, batch, channels, levels[l].height, levels[l].width,
                                      grouped + 5 * start[l], count, output, runner, rows + start[l]));
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
