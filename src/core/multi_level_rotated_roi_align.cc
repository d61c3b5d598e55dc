#include "core/multi_level_rotated_roi_align.h"

#include <algorithm>

namespace opbridge {

Status MakeMultiLevelRotatedRoiAlignParams(int64_t output_height, int64_t output_width, int64_t clockwise,
                                           int64_t sampling_ratio, const std::vector<float>& featmap_strides,
                                           float roi_scale_factor, int64_t finest_scale, int64_t aligned,
                                           MultiLevelRotatedRoiAlignParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(MakeRoiLevelParams(featmap_strides, roi_scale_factor, finest_scale, params));
  RoiAlignRotatedParams& p = params->roi_align;
  p.output_height = output_height;
  p.output_width = output_width;
  p.sampling_ratio = sampling_ratio;
  p.aligned = aligned == 1;
  p.clockwise = clockwise == 1;
  for (float scale : params->spatial_scales) {
    p.spatial_scale = scale;
    OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRotatedParams(p));
  }
  return Status::Ok();
}

Status CheckMultiLevelRotatedRoiAlignShapes(const MultiLevelRotatedRoiAlignParams& params, const Shape& rois,
                                            const std::vector<Shape>& features) {
  if (rois.size() != 2 || rois[1] != 6) {
    return Status::Error("rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, theta), ",
                         "got shape ", ShapeToString(rois));
  }
  return CheckFeatureLevelShapes(features, params.featmap_strides.size(), "featmap_strides");
}

}  // namespace opbridge
