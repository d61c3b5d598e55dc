// Grid sampler ORT glue.
#pragma once

#include <memory>

#include "core/grid_sample.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class GridSampleOp {
 public:
  explicit GridSampleOp(const GridSampleParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<GridSampleOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // grid_sample_cuda.cc
  static bool CudaInputOnHost(size_t) { return false; }
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their shape checks and the output (null when it has no elements).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* grid,
                 float** output) const;
  GridSampleParams params_;
};

}  // namespace opbridge::ort
