// Instance normalization ORT glue.
#pragma once

#include <memory>

#include "core/instance_norm.h"
#include "ort/generated/instance_norm_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class InstanceNormOp {
 public:
  using Attrs = InstanceNormAttrs;  // generated from the manifest
  explicit InstanceNormOp(const InstanceNormParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<InstanceNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // instance_norm_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  static Status Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* scale,
                       InputTensor* bias);
  InstanceNormParams params_;
};

}  // namespace opbridge::ort
