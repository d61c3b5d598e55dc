// Bicubic interpolation ORT glue (CPU: bicubic_interpolate.cc; CUDA: bicubic_interpolate_cuda.cc).
#pragma once

#include <memory>

#include "core/bicubic_interpolate.h"
#include "ort/generated/bicubic_interpolate_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class BicubicInterpolateOp {
 public:
  using Attrs = BicubicInterpolateAttrs;  // generated from the manifest
  explicit BicubicInterpolateOp(const BicubicInterpolateParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<BicubicInterpolateOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // bicubic_interpolate_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the input, the output's shape (checked) and the allocated output;
  // *output stays null when the output is empty.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, Shape* output_shape,
                 float** output) const;

  BicubicInterpolateParams params_;
};

}  // namespace opbridge::ort
