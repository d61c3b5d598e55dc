// Multi-level RoIAlign CPU kernel: mmdet's SingleRoIExtractor.forward. Every RoI gets its level
// from mmdet's mapper (on the box as given), its box is rescaled when roi_scale_factor asks for
// it, and the RoIs are grouped by level (PoolRoisByLevel); each group is pooled by the RoIAlign
// kernel at its level's scale straight into its rows of the output. A RoI without a level keeps a
// zero row, as mmdet's output, which starts as zeros, does.
#include "kernels/cpu/multi_level_roi_align.h"

#include <cmath>

#include "kernels/cpu/roi_align.h"
#include "kernels/cpu/roi_levels.h"
#include "core/roi_levels.h"

namespace opbridge::cpu {
namespace {

// Rows (batch_index, x1, y1, x2, y2): mmdet's scale sqrt((x2 - x1) * (y2 - y1)) and roi_rescale.
float BoxScale(const float* roi) { return shared::MmdetBoxScale(roi); }

void RescaleBox(const float* roi, float factor, float* rescaled) {
  rescaled[0] = roi[0];
  MmdetRoiRescale(roi + 1, factor, rescaled + 1);
}

}  // namespace

template <class T>
Status MultiLevelRoiAlign(const MultiLevelRoiAlignParams& params, const FeatureLevel<T>* levels, int64_t batch,
                          int64_t channels, const T* rois, int64_t num_rois, T* output,
                          ScratchAllocator& scratch, const TaskRunner& runner) {
  RoiAlignParams p = params.roi_align;
  // The caller allocated the output, so R * C * out_h * out_w fits in int64.
  const int64_t row_size = channels * p.output_height * p.output_width;
  CallSampleWork work(channels);  // the levels' RoIs add to the call's work limit
  return PoolRoisByLevel(params, {5, BoxScale, RescaleBox}, rois, num_rois, row_size, output, scratch,
                         [&](int64_t l, const float* group, int64_t count, const int64_t* rows) {
                           p.spatial_scale = params.spatial_scales[l];
                           return RoiAlign(p, levels[l].data, batch, channels, levels[l].height, levels[l].width,
                                           group, count, output, runner, rows, &work);
                         });
}

#define OPBRIDGE_MULTI_LEVEL_ROI_ALIGN(T)                                                                 \
  template Status MultiLevelRoiAlign<T>(const MultiLevelRoiAlignParams&, const FeatureLevel<T>*, int64_t, \
                                        int64_t, const T*, int64_t, T*, ScratchAllocator&, const TaskRunner&);
OPBRIDGE_MULTI_LEVEL_ROI_ALIGN(float)
OPBRIDGE_MULTI_LEVEL_ROI_ALIGN(shared::Float16)
OPBRIDGE_MULTI_LEVEL_ROI_ALIGN(shared::BFloat16)
#undef OPBRIDGE_MULTI_LEVEL_ROI_ALIGN

}  // namespace opbridge::cpu
