// Gather of top-k rows ORT glue.
#pragma once

#include <memory>

#include "ort/ort_util.h"

namespace opbridge::ort {

class GatherTopkOp {
 public:
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<GatherTopkOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
