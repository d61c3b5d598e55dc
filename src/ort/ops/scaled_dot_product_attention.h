// Scaled dot-product attention ORT glue.
#pragma once

#include <memory>

#include "ort/generated/scaled_dot_product_attention_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class ScaledDotProductAttentionOp {
 public:
  using Attrs = ScaledDotProductAttentionAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<ScaledDotProductAttentionOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
