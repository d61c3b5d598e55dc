#include "core/rotated_feature_align.h"

#include <cmath>

namespace opbridge {

Status CheckRotatedFeatureAlignParams(const RotatedFeatureAlignParams& p) {
  if (!std::isfinite(p.spatial_scale) || p.spatial_scale <= 0.0f) {
    return Status::Error("spatial_scale must be a finite number > 0, got ", p.spatial_scale);
  }
  // mmcv asserts points in [1, 5]; its kernels read only the first `points` of the 5 samples.
  if (p.points != 1 && p.points != 5) {
    return Status::Error("points must be 1 (the box centre) or 5 (the centre and the 4 corners), got ",
                         p.points);
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
  return Status::Ok();
}

Shape RotatedFeatureAlignOutputShape(const Shape& features) { return features; }

}  // namespace opbridge
