#include "core/soft_nms.h"

#include <cmath>

namespace opbridge {

Status MakeSoftNmsParams(float iou_threshold, float sigma, float min_score, int64_t method,
                         int64_t offset, SoftNmsParams* params) {
  if (std::isnan(iou_threshold)) return Status::Error("iou_threshold must not be NaN");
  if (std::isnan(min_score)) return Status::Error("min_score must not be NaN");
  if (method == 2 && !(sigma > 0.0f)) {
    return Status::Error("sigma must be > 0 for method 2 (gaussian), got ", sigma);
  }
  params->iou_threshold = iou_threshold;
  params->sigma = sigma;
  params->min_score = min_score;
  params->method = static_cast<SoftNmsMethod>(method);
  params->offset = offset;
  return Status::Ok();
}

Status CheckSoftNmsShapes(const Shape& boxes, const Shape& scores) {
  if (boxes.size() != 2 || boxes[1] != 4) {
    return Status::Error("boxes must have shape [N, 4] (x1, y1, x2, y2), got shape ",
                         ShapeToString(boxes));
  }
  if (scores.size() != 1 || scores[0] != boxes[0]) {
    return Status::Error("scores must have shape [N] with N = ", boxes[0],
                         " (the number of boxes), got shape ", ShapeToString(scores));
  }
  return Status::Ok();
}

}  // namespace opbridge
