// NMSMatch (mmdeploy's NMSMatch): parameters, validation and output shapes, shared by every
// backend. Boxes are (x1, y1, x2, y2).
#pragma once

#include <cstdint>

#include "core/nms.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// opbridge::NmsMatch and mmdeploy::NMSMatch: boxes [B, N, 4], scores [B, C, N] and the two
// thresholds (inputs, as mmdeploy exports them) -> rows (batch, class, kept box, suppressed box).
// Per batch and class, every box takes part in greedy suppression (IoU >= iou_threshold, with
// mmdeploy's 1e-10 in the union); a kept box scoring > score_threshold reports the boxes it
// suppressed.
struct NmsMatchParams {
  float iou_threshold = 0.1f;
  float score_threshold = 0.05f;
};

// Value rules of the threshold inputs (run time): iou_threshold in [0, 1], score_threshold not NaN.
Status MakeNmsMatchParams(float iou_threshold, float score_threshold, NmsMatchParams* params);

// Shape rules: boxes [B, N, 4], scores [B, C, N].
Status CheckNmsMatchShapes(const Shape& boxes, const Shape& scores);

// A threshold input holds one value: shape [1] (what mmdeploy's exporter writes) or [] (a
// scalar). `name` is the input's name.
Status CheckThresholdShape(const char* name, const Shape& shape);

}  // namespace opbridge
