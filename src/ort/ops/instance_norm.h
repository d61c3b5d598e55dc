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
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // instance_norm_cuda.cc
  static bool CudaInputOnHost(size_t) { return false; }
  static Status InferShape(const ShapeInference& infer);

 private:
  static Status Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* scale,
                       InputTensor* bias);
  InstanceNormParams params_;
};

}  // namespace opbridge::ort
