// Soft-NMS ORT glue.
#pragma once

#include <memory>

#include "core/soft_nms.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class SoftNmsOp {
 public:
  explicit SoftNmsOp(const SoftNmsParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<SoftNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  SoftNmsParams params_;
};

}  // namespace opbridge::ort
