// Matrix inverse ORT glue.
#pragma once

#include <memory>

#include "core/inverse.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class InverseOp {
 public:
  explicit InverseOp(const InverseParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<InverseOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  InverseParams params_;
};

}  // namespace opbridge::ort
