// Soft-NMS ORT glue.
#pragma once

#include <memory>

#include "core/soft_nms.h"
#include "ort/generated/soft_nms_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class SoftNmsOp {
 public:
  using Attrs = SoftNmsAttrs;  // generated from the manifest
  explicit SoftNmsOp(const SoftNmsParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<SoftNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // soft_nms_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs, their shapes checked.
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores);

  SoftNmsParams params_;
};

}  // namespace opbridge::ort
