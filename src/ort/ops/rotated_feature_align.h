// Rotated feature align ORT glue.
#pragma once

#include <memory>

#include "core/rotated_feature_align.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RotatedFeatureAlignOp {
 public:
  explicit RotatedFeatureAlignOp(const RotatedFeatureAlignParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<RotatedFeatureAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  RotatedFeatureAlignParams params_;
};

}  // namespace opbridge::ort
