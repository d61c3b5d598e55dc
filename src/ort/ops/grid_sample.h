// Grid sampler ORT glue.
#pragma once

#include <memory>

#include "core/grid_sample.h"
#include "ort/generated/grid_sample_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class GridSampleOp {
 public:
  using Attrs = GridSampleAttrs;  // generated from the manifest
  explicit GridSampleOp(const GridSampleParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<GridSampleOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // grid_sample_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their shape checks and the output (null when it has no elements).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* grid,
                 void** output) const;
  GridSampleParams params_;
};

}  // namespace opbridge::ort
