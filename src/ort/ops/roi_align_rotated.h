// RoIAlignRotated ORT glue.
#pragma once

#include <memory>

#include "core/roi_align_rotated.h"
#include "ort/generated/roi_align_rotated_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RoiAlignRotatedOp {
 public:
  using Attrs = RoiAlignRotatedAttrs;  // generated from the manifest
  explicit RoiAlignRotatedOp(const RoiAlignRotatedParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<RoiAlignRotatedOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // roi_align_rotated_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs (shapes checked; not the RoIs' values, which the CUDA
  // kernel reads in device memory) and the output; *output stays null when it is empty.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* rois,
                 float** output) const;

  RoiAlignRotatedParams params_;
};

}  // namespace opbridge::ort
