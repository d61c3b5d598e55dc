// Rotated feature align: parameters, validation and output shape, shared by every backend.
//
// Numerics follow mmcv's rotated_feature_align (its CPU kernel, which the ORT op
// mmcv::MMCVRotatedFeatureAlign copies); see docs/ops/rotated_feature_align.md for the rules and
// where opbridge differs from it.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct RotatedFeatureAlignParams {
  float spatial_scale = 1.0f;  // multiplies the box centre and size (not the angle)
  int64_t points = 1;          // 1: the box centre; 5: the centre and the 4 corners
};

// Attribute rules, checked once when the session is created (points is 1 or 5: the values the manifest
// allows were checked by the glue's generated reader;
// mmcv asserts points in [1, 5], and its kernels read only the first `points` of the 5 samples).
Status CheckRotatedFeatureAlignParams(const RotatedFeatureAlignParams& params);
// Shape rules: features [N, C, H, W], best_rbboxes [N, H, W, 5] with features' N, H and W.
Status CheckRotatedFeatureAlignShapes(const Shape& features, const Shape& best_rbboxes);
// features' shape, [N, C, H, W].
Shape RotatedFeatureAlignOutputShape(const Shape& features);

}  // namespace opbridge
