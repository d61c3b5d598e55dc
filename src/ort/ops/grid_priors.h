// Grid priors ORT glue.
#pragma once

#include <memory>

#include "core/grid_priors.h"
#include "ort/generated/grid_priors_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class GridPriorsOp {
 public:
  using Attrs = GridPriorsAttrs;  // generated from the manifest
  explicit GridPriorsOp(const GridPriorsParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<GridPriorsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  GridPriorsParams params_;
};

}  // namespace opbridge::ort
