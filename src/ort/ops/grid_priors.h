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
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // grid_priors_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their shape checks and the output [H * W * A, 4]; the sizes the
  // kernel takes (only the providers' lengths are read: their values never are).
  struct Grid {
    const float* base_anchors = nullptr;
    int64_t anchors = 0, height = 0, width = 0;
    float* output = nullptr;
  };
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, Grid* grid);
  GridPriorsParams params_;
};

}  // namespace opbridge::ort
