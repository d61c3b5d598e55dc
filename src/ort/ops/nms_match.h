// NMSMatch ORT glue.
#pragma once

#include <memory>

#include "core/nms_match.h"
#include "ort/generated/nms_match_attrs.h"
#include "core/nms_match.h"
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
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_match_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: boxes and scores (shapes checked) and the thresholds, read on the
  // host (the CUDA twin's manifest entry keeps them there) and checked.
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                        NmsMatchParams* params);
};

}  // namespace opbridge::ort
