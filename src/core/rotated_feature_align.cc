#include "core/rotated_feature_align.h"

#include <climits>
#include <cmath>

namespace opbridge {

Status CheckRotatedFeatureAlignParams(const RotatedFeatureAlignParams& p) {
  if (!std::isfinite(p.spatial_scale) || p.spatial_scale <= 0.0f) {
    return Status::Error("spatial_scale must be a finite number > 0, got ", p.spatial_scale);
  }
  return Status::Ok();
}

Status CheckRotatedFeatureAlignShapes(const Shape& features, const Shape& best_rbboxes) {
  if (features.size() != 4) {
    return Status::Error("features must have rank 4 [N, C, H, W], got shape ", ShapeToString(features));
  }
  const Shape expected = {features[0], features[2], features[3], 5};
  if (best_rbboxes != expected) {
    return Status::Error("best_rbboxes must have shape [N, H, W, 5] = ", ShapeToString(expected),
                         " (N, H and W of features ", ShapeToString(features), "), got shape ",
                         ShapeToString(best_rbboxes));
  }
  // The kernels index a plane with 32 bits (every axis non-empty: otherwise there is nothing to read).
  const int64_t n = features[0], c = features[1], h = features[2], w = features[3];
  if (n > 0 && c > 0 && h > 0 && w > 0 && h > INT32_MAX / w) {
    return Status::Error("features planes (H * W) of more than 2^31 - 1 elements are not supported, got ", h, "x",
                         w);
  }
  return Status::Ok();
}

Shape RotatedFeatureAlignOutputShape(const Shape& features) { return features; }

}  // namespace opbridge
