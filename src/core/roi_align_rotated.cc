#include "core/roi_align_rotated.h"

#include "core/roi_align.h"

namespace opbridge {

Status CheckRoiAlignRotatedParams(const RoiAlignRotatedParams& p) {
  // The output size and scale follow RoIAlign's rules (and its per-RoI sample limits).
  RoiAlignParams axis_aligned;
  axis_aligned.output_height = p.output_height;
  axis_aligned.output_width = p.output_width;
  axis_aligned.spatial_scale = p.spatial_scale;
  return CheckRoiAlignParams(axis_aligned);
}

Status CheckRoiAlignRotatedShapes(const Shape& input, const Shape& rois) {
  if (input.size() != 4) {
    return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(input));
  }
  if (rois.size() != 2 || rois[1] != 6) {
    return Status::Error("rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, theta), ",
                         "got shape ", ShapeToString(rois));
  }
  return Status::Ok();
}

Shape RoiAlignRotatedOutputShape(const RoiAlignRotatedParams& p, const Shape& input, const Shape& rois) {
  return {rois[0], input[1], p.output_height, p.output_width};
}

}  // namespace opbridge
