// NMSMatch ORT glue.
#pragma once

#include <memory>

#include "core/nms_match.h"
#include "ort/generated/nms_match_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::NmsMatch and mmdeploy::NMSMatch: boxes [B, N, 4], scores [B, C, N], iou_threshold [1],
// score_threshold [1] -> matches [K, 4] (batch, class, kept box, suppressed box). The thresholds
// are inputs (as mmdeploy exports them), so they are read and checked on every run.
class NmsMatchOp {
 public:
  using Attrs = NmsMatchAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<NmsMatchOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
