// Bicubic interpolation ORT glue.
#pragma once

#include <memory>

#include "core/bicubic_interpolate.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class BicubicInterpolateOp {
 public:
  explicit BicubicInterpolateOp(const BicubicInterpolateParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<BicubicInterpolateOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  BicubicInterpolateParams params_;
};

}  // namespace opbridge::ort
