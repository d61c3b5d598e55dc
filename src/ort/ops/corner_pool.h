// Corner pooling ORT glue.
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
  static Status InferShape(const ShapeInference& infer);

 private:
  CornerPoolParams params_;
};

}  // namespace opbridge::ort
