#include "core/nms_rotated.h"

namespace opbridge {

Status MakeNmsRotatedParams(float iou_threshold, int64_t clockwise, NmsRotatedParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  params->iou_threshold = iou_threshold;
  params->clockwise = clockwise == 1;
  return Status::Ok();
}

Status MakeMulticlassNmsRotatedParams(float iou_threshold, float score_threshold, MulticlassNmsRotatedParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(CheckScoreThreshold("score_threshold", score_threshold));
  params->iou_threshold = iou_threshold;
  params->score_threshold = score_threshold;
  return Status::Ok();
}

Status CheckNmsRotatedShapes(const Shape& boxes, const Shape& scores, const Shape* idxs) {
  return CheckBoxListShapes(boxes, scores, idxs, 5, "cx, cy, w, h, theta");
}

}  // namespace opbridge
