// Rotated NMS (mmcv.ops.nms_rotated numerics, and mmdeploy's NMSRotated): parameters, validation
// and output shapes, shared by every backend. Boxes are (cx, cy, w, h, theta in radians).
#pragma once

#include <cstdint>

#include "core/nms.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// How the rotated IoU decides: mmcv's nms_rotated (CPU) suppresses when IoU >= threshold and
// gives degenerate boxes (area below 1e-14) an IoU of 0; mmdeploy's NMSRotated suppresses when
// IoU > threshold, with no guard of its own (opbridge gives its degenerate boxes 0 as well).
enum class RotatedIouRuleKind { kMmcv, kMmdeploy };

// opbridge::NmsRotated: boxes [N, 5], scores [N], optional categories [N] -> keep [K].
struct NmsRotatedParams {
  float iou_threshold = 0.5f;
  bool clockwise = true;  // false: theta is negated first (mmcv's clockwise=False)
};

// opbridge::MulticlassNmsRotated and mmdeploy::NMSRotated: boxes [B, N, 5], scores [B, C, N]
// -> rows (batch, class, box) of the boxes scoring > score_threshold that survive.
struct MulticlassNmsRotatedParams {
  float iou_threshold = 0.5f;
  float score_threshold = 0.0f;
};

// Attribute rules (session creation; clockwise is 0 or 1: the values the manifest allows were checked
// by the glue's generated reader).
Status MakeNmsRotatedParams(float iou_threshold, int64_t clockwise, NmsRotatedParams* params);
Status MakeMulticlassNmsRotatedParams(float iou_threshold, float score_threshold, MulticlassNmsRotatedParams* params);
// Shape rules: boxes [N, 5], scores [N], and idxs [N] when not null.
Status CheckNmsRotatedShapes(const Shape& boxes, const Shape& scores, const Shape* idxs);

}  // namespace opbridge
