// RoIAlignRotated: parameters, validation and output shape, shared by every backend.
//
// Numerics follow mmcv's roi_align_rotated CPU kernel (detectron2's ROIAlignRotated): the RoIAlign
// sampling grid laid out in the box's own frame, rotated by theta about the box centre, average
// pooled. See docs/ops/roi_align_rotated.md for the exact rules and where opbridge differs.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct RoiAlignRotatedParams {
  int64_t output_height = 1;
  int64_t output_width = 1;
  float spatial_scale = 1.0f;
  int64_t sampling_ratio = 0;  // > 0: fixed samples per bin side; <= 0: ceil(roi_side / out_side)
  bool aligned = true;         // true: the centre shifts by -0.5 and sides are not clamped to >= 1
  bool clockwise = false;      // true: theta is negated
};

// Attribute rules, checked once when the session is created (the output size rules of RoIAlign).
Status CheckRoiAlignRotatedParams(const RoiAlignRotatedParams& params);
// Shape rules: input [N, C, H, W], rois [R, 6].
Status CheckRoiAlignRotatedShapes(const Shape& input, const Shape& rois);
// [R, C, output_height, output_width]
Shape RoiAlignRotatedOutputShape(const RoiAlignRotatedParams& params, const Shape& input, const Shape& rois);

}  // namespace opbridge
