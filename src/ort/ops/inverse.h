// Matrix inverse ORT glue (CPU: inverse.cc; CUDA: inverse_cuda.cc).
#pragma once

#include <memory>

#include "core/inverse.h"
#include "ort/generated/inverse_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class InverseOp {
 public:
  using Attrs = InverseAttrs;  // generated from the manifest
  explicit InverseOp(const InverseParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<InverseOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // inverse_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the input (its shape checked), the allocated inverse and, when
  // the node has it, the info output (else null).
  struct Call {
    InputTensor input;
    int64_t batch = 0, order = 0;
    float* output = nullptr;
    int32_t* info = nullptr;
  };
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const;

  InverseParams params_;
};

}  // namespace opbridge::ort
