// Axis-aligned NMS (torchvision.ops.nms / batched_nms, mmcv::NonMaxSuppression, and the
// multi-class layout of ONNX NonMaxSuppression): parameters, validation and output shapes,
// shared by every backend.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// Greedy NMS over boxes (x1, y1, x2, y2): a box is suppressed when its IoU with a kept box of
// the same category is > iou_threshold.
struct NmsParams {
  float iou_threshold = 0.5f;
  int64_t offset = 0;  // 0 or 1: added to widths and heights (mmcv's legacy pixel convention)
};

// The multi-class layout: boxes [B, N, 4], scores [B, C, N]; per batch and class, boxes whose
// score is > score_threshold, at most max_output_boxes_per_class kept (-1: no limit).
struct MulticlassNmsParams {
  float iou_threshold = 0.5f;
  float score_threshold = 0.0f;
  int64_t max_output_boxes_per_class = -1;
};

// The largest box count the NMS kernels take (positions are 32-bit).
constexpr int64_t kMaxNmsBoxes = 2147483647;

// Attribute rules (session creation; offset is 0 or 1: the values the manifest allows were checked by
// the glue's generated reader).
Status MakeNmsParams(float iou_threshold, int64_t offset, NmsParams* params);
Status MakeMulticlassNmsParams(float iou_threshold, float score_threshold,
                               int64_t max_output_boxes_per_class, MulticlassNmsParams* params);
// IoU thresholds of every NMS op: a number in [0, 1]. `name` is the attribute or input.
Status CheckIouThreshold(const char* name, float value);
// Score thresholds: any value but NaN.
Status CheckScoreThreshold(const char* name, float value);

// Shape rules: boxes [N, 4], scores [N], and idxs [N] when not null.
Status CheckNmsShapes(const Shape& boxes, const Shape& scores, const Shape* idxs);
// The same for any box layout: boxes [N, box_size] (`layout` names the columns in messages).
Status CheckBoxListShapes(const Shape& boxes, const Shape& scores, const Shape* idxs, int64_t box_size,
                          const char* layout);
// Shape rules of the multi-class layout: boxes [B, N, box_size], scores [B, C, N].
Status CheckMulticlassNmsShapes(const Shape& boxes, const Shape& scores, int64_t box_size);

}  // namespace opbridge
