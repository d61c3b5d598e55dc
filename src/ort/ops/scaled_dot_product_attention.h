// Scaled dot-product attention ORT glue (CPU: scaled_dot_product_attention.cc; CUDA:
// scaled_dot_product_attention_cuda.cc).
#pragma once

#include <memory>

#include "core/scaled_dot_product_attention.h"
#include "ort/generated/scaled_dot_product_attention_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class ScaledDotProductAttentionOp {
 public:
  using Attrs = ScaledDotProductAttentionAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<ScaledDotProductAttentionOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // scaled_dot_product_attention_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs (shapes checked) and both allocated outputs.
  struct Call {
    InputTensor q, k, v, mask;
    AttentionSizes sizes;
    float* out = nullptr;
    float* attn = nullptr;
  };
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const;
};

}  // namespace opbridge::ort
