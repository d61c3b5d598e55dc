// Corner pooling ORT glue.
#pragma once

#include <memory>

#include "core/corner_pool.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class CornerPoolOp {
 public:
  explicit CornerPoolOp(const CornerPoolParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<CornerPoolOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  CornerPoolParams params_;
};

}  // namespace opbridge::ort
