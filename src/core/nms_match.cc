#include "core/nms_match.h"

namespace opbridge {

Status MakeNmsMatchParams(float iou_threshold, float score_threshold, NmsMatchParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(CheckScoreThreshold("score_threshold", score_threshold));
  params->iou_threshold = iou_threshold;
  params->score_threshold = score_threshold;
  return Status::Ok();
}

Status CheckNmsMatchShapes(const Shape& boxes, const Shape& scores) {
  return CheckMulticlassNmsShapes(boxes, scores, 4);
}

Status CheckThresholdShape(const char* name, const Shape& shape) {
  // mmdeploy reads element 0 of whatever it is given; a tensor of any other size is a mistake
  // (and an empty one has no element 0).
  if (!(shape.empty() || (shape.size() == 1 && shape[0] == 1))) {
    return Status::Error(name, " must have shape [1] or [] (one value), got shape ", ShapeToString(shape));
  }
  return Status::Ok();
}

}  // namespace opbridge
