// Gather of top-k rows ORT glue.
#pragma once

#include <memory>

#include "ort/generated/gather_topk_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class GatherTopkOp {
 public:
  using Attrs = GatherTopkAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<GatherTopkOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
