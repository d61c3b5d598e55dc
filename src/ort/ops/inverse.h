// Matrix inverse ORT glue.
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
  static Status InferShape(const ShapeInference& infer);

 private:
  InverseParams params_;
};

}  // namespace opbridge::ort
