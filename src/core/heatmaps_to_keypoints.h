// Keypoint decoding (torchvision's heatmaps_to_keypoints, Keypoint R-CNN's last step): validation
// and output shapes, shared by every backend. The op has no parameters.
#pragma once

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// Shape rules: maps [R, K, H, W] with H, W >= 1; rois [R, 4].
Status CheckHeatmapsToKeypointsShapes(const Shape& maps, const Shape& rois);

}  // namespace opbridge
