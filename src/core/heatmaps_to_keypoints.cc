#include "core/heatmaps_to_keypoints.h"

namespace opbridge {

Status CheckHeatmapsToKeypointsShapes(const Shape& maps, const Shape& rois) {
  if (maps.size() != 4 || maps[2] < 1 || maps[3] < 1) {
    return Status::Error("maps must have shape [R, K, H, W] with H, W >= 1 (one heatmap per roi and keypoint), got shape ",
                         ShapeToString(maps));
  }
  if (rois.size() != 2 || rois[0] != maps[0] || rois[1] != 4) {
    return Status::Error("rois must have shape [R, 4] with R = ", maps[0], " (x1, y1, x2, y2 per heatmap set), got shape ",
                         ShapeToString(rois));
  }
  return Status::Ok();
}

}  // namespace opbridge
