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
  static Status InferShape(const ShapeInference& infer);

 private:
  GridSampleParams params_;
};

}  // namespace opbridge::ort
