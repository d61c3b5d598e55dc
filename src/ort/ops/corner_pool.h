// Corner pooling ORT glue (CPU: corner_pool.cc; CUDA: corner_pool_cuda.cc).
#pragma once

#include <memory>

#include "core/corner_pool.h"
#include "ort/generated/corner_pool_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class CornerPoolOp {
 public:
  using Attrs = CornerPoolAttrs;  // generated from the manifest
  explicit CornerPoolOp(const CornerPoolParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<CornerPoolOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // corner_pool_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the input (its shape checked) and the allocated output.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, float** output) const;

  CornerPoolParams params_;
};

}  // namespace opbridge::ort
