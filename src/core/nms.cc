#include "core/nms.h"

#include <cmath>

namespace opbridge {

Status CheckIouThreshold(const char* name, float value) {
  // An IoU lies in [0, 1]: a threshold outside it is a mistake (a negative one would suppress
  // boxes that do not even overlap).
  if (!(value >= 0.0f && value <= 1.0f)) {
    return Status::Error(name, " must lie in [0, 1], got ", value);
  }
  return Status::Ok();
}

Status CheckScoreThreshold(const char* name, float value) {
  if (std::isnan(value)) return Status::Error(name, " must not be NaN");
  return Status::Ok();
}

Status MakeNmsParams(float iou_threshold, int64_t offset, NmsParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  params->iou_threshold = iou_threshold;
  params->offset = offset;
  return Status::Ok();
}

Status MakeMulticlassNmsParams(float iou_threshold, float score_threshold,
                               int64_t max_output_boxes_per_class, MulticlassNmsParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(CheckScoreThreshold("score_threshold", score_threshold));
  if (max_output_boxes_per_class < -1) {
    return Status::Error("max_output_boxes_per_class must be -1 (no limit) or >= 0, got ",
                         max_output_boxes_per_class);
  }
  params->iou_threshold = iou_threshold;
  params->score_threshold = score_threshold;
  params->max_output_boxes_per_class = max_output_boxes_per_class;
  return Status::Ok();
}

Status CheckBoxListShapes(const Shape& boxes, const Shape& scores, const Shape* idxs, int64_t box_size,
                          const char* layout) {
  if (boxes.size() != 2 || boxes[1] != box_size) {
    return Status::Error("boxes must have shape [N, ", box_size, "] (", layout, "), got shape ", ShapeToString(boxes));
  }
  if (boxes[0] > kMaxNmsBoxes) {
    return Status::Error("boxes has ", boxes[0], " rows; at most ", kMaxNmsBoxes, " are supported");
  }
  if (scores.size() != 1 || scores[0] != boxes[0]) {
    return Status::Error("scores must have shape [N] with N = ", boxes[0], " (the number of boxes), got shape ",
                         ShapeToString(scores));
  }
  if (idxs != nullptr && (idxs->size() != 1 || (*idxs)[0] != boxes[0])) {
    return Status::Error("idxs must have shape [N] with N = ", boxes[0], " (one category per box), got shape ",
                         ShapeToString(*idxs));
  }
  return Status::Ok();
}

Status CheckNmsShapes(const Shape& boxes, const Shape& scores, const Shape* idxs) {
  return CheckBoxListShapes(boxes, scores, idxs, 4, "x1, y1, x2, y2");
}

Status CheckMulticlassNmsShapes(const Shape& boxes, const Shape& scores, int64_t box_size) {
  if (boxes.size() != 3 || boxes[2] != box_size) {
    return Status::Error("boxes must have shape [B, N, ", box_size, "], got shape ", ShapeToString(boxes));
  }
  if (boxes[1] > kMaxNmsBoxes) {
    return Status::Error("boxes has ", boxes[1], " boxes per batch; at most ", kMaxNmsBoxes, " are supported");
  }
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1]) {
    return Status::Error("scores must have shape [B, C, N] with B = ", boxes[0], " and N = ", boxes[1],
                         " (as boxes), got shape ", ShapeToString(scores));
  }
  // One problem per (batch, class), each with per-problem bookkeeping: with no boxes the inputs
  // are empty whatever B and C are, so their product is bounded here, before any allocation.
  if (scores[1] > 0 && scores[0] > kMaxNmsBoxes / scores[1]) {
    return Status::Error("B * C (", scores[0], " x ", scores[1], " from scores ", ShapeToString(scores),
                         ") must be at most ", kMaxNmsBoxes);
  }
  return Status::Ok();
}

}  // namespace opbridge
