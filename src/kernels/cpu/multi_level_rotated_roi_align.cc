// Multi-level rotated RoIAlign CPU kernel: mmrotate's RotatedSingleRoIExtractor.forward. Every RoI
// gets its level from the finest_scale rule on sqrt(w * h) (the box as given), its w and h are
// rescaled when roi_scale_factor asks for it, and the RoIs are grouped by level
// (PoolRoisByLevel); each group is pooled by the RoIAlignRotated kernel at its level's scale
// straight into its rows of the output. A RoI without a level keeps a zero row, as mmrotate's
// output, which starts as zeros, does.
#include "kernels/cpu/multi_level_rotated_roi_align.h"

#include <cmath>

#include "kernels/cpu/roi_align_rotated.h"
#include "kernels/cpu/roi_levels.h"

namespace opbridge::cpu {
namespace {

// Rows (batch_index, cx, cy, w, h, theta): mmrotate's map_roi_levels scale, sqrt(w * h), and its
// roi_rescale.
float RotatedBoxScale(const float* roi) { return std::sqrt(roi[3] * roi[4]); }

void RescaleRotatedBox(const float* roi, float factor, float* rescaled) {
  rescaled[0] = roi[0];
  MmrotateRoiRescale(roi + 1, factor, rescaled + 1);
}

}  // namespace

Status MultiLevelRotatedRoiAlign(const MultiLevelRotatedRoiAlignParams& params, const FeatureLevel<float>* levels,
                                 int64_t batch, int64_t channels, const float* rois, int64_t num_rois, float* output,
                                 ScratchAllocator& scratch, const TaskRunner& runner) {
  RoiAlignRotatedParams p = params.roi_align;
  // The caller allocated the output, so R * C * out_h * out_w fits in int64.
  const int64_t row_size = channels * p.output_height * p.output_width;
  CallSampleWork work(channels);  // the levels' RoIs add to the call's work limit
  return PoolRoisByLevel(params, {6, RotatedBoxScale, RescaleRotatedBox}, rois, num_rois, row_size, output, scratch,
                         [&](int64_t l, const float* group, int64_t count, const int64_t* rows) {
                           p.spatial_scale = params.spatial_scales[l];
                           return RoiAlignRotated(p, levels[l].data, batch, channels, levels[l].height,
                                                  levels[l].width, group, count, output, scratch, runner, rows,
                                                  &work);
                         });
}

}  // namespace opbridge::cpu
