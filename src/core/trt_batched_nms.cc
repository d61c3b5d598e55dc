#include "core/trt_batched_nms.h"

#include <cmath>

#include "core/nms.h"

namespace opbridge {


Status MakeTrtBatchedNmsParams(int64_t background_label_id, int64_t num_classes, int64_t topk, int64_t keep_topk,
                               float score_threshold, float iou_threshold, int64_t is_normalized, int64_t clip_boxes,
                               int64_t return_index, bool rotated, TrtBatchedNmsParams* params) {
  if (num_classes < 1) return Status::Error("num_classes must be >= 1, got ", num_classes);
  if (background_label_id < -1) {
    return Status::Error("background_label_id must be -1 (none) or a class, got ", background_label_id);
  }
  if (keep_topk < 0 || keep_topk > kMaxNmsBoxes) {
    return Status::Error("keep_topk must lie in [0, ", kMaxNmsBoxes, "] (detections per image), got ", keep_topk);
  }
  OPBRIDGE_RETURN_IF_ERROR(CheckIouThreshold("iou_threshold", iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(CheckScoreThreshold("score_threshold", score_threshold));
  params->background_label_id = background_label_id;
  params->num_classes = num_classes;
  params->topk = topk;
  params->keep_topk = keep_topk;
  params->score_threshold = score_threshold;
  params->iou_threshold = iou_threshold;
  params->clip_boxes = clip_boxes == 1;
  params->return_index = return_index == 1;
  params->rotated = rotated;
  return Status::Ok();
}

Status CheckTrtBatchedNmsShapes(const TrtBatchedNmsParams& params, const Shape& boxes, const Shape& scores) {
  const int64_t box_size = params.box_size();
  if (boxes.size() != 4 || boxes[3] != box_size) {
    return Status::Error("boxes must have shape [B, S, 1 or C, ", box_size, "] (", params.rotated ? "cx, cy, w, h, theta" : "x1, y1, x2, y2",
                         "), got shape ", ShapeToString(boxes));
  }
  if (boxes[1] > kMaxNmsBoxes) {
    return Status::Error("boxes has ", boxes[1], " boxes per image; at most ", kMaxNmsBoxes, " are supported");
  }
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[1] != boxes[1] || scores[2] != params.num_classes) {
    return Status::Error("scores must have shape [B, S, C] with B = ", boxes[0], ", S = ", boxes[1],
                         " (as boxes) and C = ", params.num_classes, " (num_classes), got shape ", ShapeToString(scores));
  }
  if (boxes[2] != 1 && boxes[2] != params.num_classes) {
    return Status::Error("boxes' third dimension must be 1 (boxes shared by all classes) or ", params.num_classes,
                         " (num_classes, a box per class), got ", boxes[2]);
  }
  // A per-class box's index is c * S + s, an int32 output.
  if (boxes[2] > 1 && boxes[1] > kMaxNmsBoxes / boxes[2]) {
    return Status::Error("with a box per class, num_classes * S must be at most ", kMaxNmsBoxes,
                         " (the index output is int32), got ", boxes[2], " * ", boxes[1]);
  }
  // One problem per (image, class); with no boxes the inputs are empty whatever B is.
  if (boxes[0] > kMaxNmsBoxes / params.num_classes) {
    return Status::Error("B * num_classes (", boxes[0], " x ", params.num_classes, ") must be at most ", kMaxNmsBoxes);
  }
  return Status::Ok();
}

}  // namespace opbridge
