// Instance normalization ORT glue.
#pragma once

#include <memory>

#include "core/instance_norm.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class InstanceNormOp {
 public:
  explicit InstanceNormOp(const InstanceNormParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<InstanceNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  InstanceNormParams params_;
};

}  // namespace opbridge::ort
