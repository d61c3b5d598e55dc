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
  static Status InferShape(const ShapeInference& infer);

 private:
  RotatedFeatureAlignParams params_;
};

}  // namespace opbridge::ort
