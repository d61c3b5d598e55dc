// Grid priors ORT glue.
#pragma once

#include <memory>

#include "core/grid_priors.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class GridPriorsOp {
 public:
  explicit GridPriorsOp(const GridPriorsParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<GridPriorsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  GridPriorsParams params_;
};

}  // namespace opbridge::ort
