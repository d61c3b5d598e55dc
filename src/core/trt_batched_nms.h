// TensorRT's batched NMS as a CPU op (mmdeploy's TRTBatchedNMS and TRTBatchedRotatedNMS plugins,
// NVIDIA's batchedNMSPlugin pipeline): parameters, validation and output shapes, shared by every
// backend.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct TrtBatchedNmsParams {
  int64_t background_label_id = 0;  // a class whose scores are cleared; -1: none
  int64_t num_classes = 0;          // C, which the scores must have
  int64_t topk = 0;                 // candidates per class taking part; <= 0 or > S: all S
  int64_t keep_topk = 0;            // detections per image in the output
  float score_threshold = 0.0f;     // candidates score > this
  float iou_threshold = 0.0f;       // suppression when IoU > this
  bool clip_boxes = true;           // clamp every output box value to [0, 1]
  bool return_index = false;        // the third output, the boxes' indices, is written
  bool rotated = false;             // boxes (cx, cy, w, h, theta) instead of (x1, y1, x2, y2)
  int64_t box_size() const { return rotated ? 5 : 4; }
};

// Attribute rules (session creation; the flags are 0 or 1: the values the manifest allows were checked
// by the glue's generated reader). is_normalized changes nothing:
// the plugin's IoU never adds the +1 of unnormalized boxes.
Status MakeTrtBatchedNmsParams(int64_t background_label_id, int64_t num_classes, int64_t topk, int64_t keep_topk,
                               float score_threshold, float iou_threshold, int64_t is_normalized, int64_t clip_boxes,
                               int64_t return_index, bool rotated, TrtBatchedNmsParams* params);
// Shape rules: boxes [B, S, L, 4 or 5] with L = 1 (shared by all classes) or C; scores [B, S, C]
// with C = num_classes.
Status CheckTrtBatchedNmsShapes(const TrtBatchedNmsParams& params, const Shape& boxes, const Shape& scores);

}  // namespace opbridge
