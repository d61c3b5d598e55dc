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
  static Status InferShape(const ShapeInference& infer);

 private:
  SoftNmsParams params_;
};

}  // namespace opbridge::ort
