// Rotated feature align ORT glue.
#pragma once

#include <memory>

#include "core/rotated_feature_align.h"
#include "ort/generated/rotated_feature_align_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RotatedFeatureAlignOp {
 public:
  using Attrs = RotatedFeatureAlignAttrs;  // generated from the manifest
  explicit RotatedFeatureAlignOp(const RotatedFeatureAlignParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<RotatedFeatureAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // rotated_feature_align_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs (shapes checked) and the allocated output (of the
  // features' dtype).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* features, InputTensor* boxes,
                 void** output) const;

  RotatedFeatureAlignParams params_;
};

}  // namespace opbridge::ort
