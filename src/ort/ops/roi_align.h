// RoIAlign ORT glue.
#pragma once

#include <memory>

#include "core/roi_align.h"
#include "ort/generated/roi_align_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RoiAlignOp {
 public:
  using Attrs = RoiAlignAttrs;  // generated from the manifest
  explicit RoiAlignOp(const RoiAlignParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<RoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // roi_align_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their shape checks and the output (null when it has no elements).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* rois,
                 void** output) const;
  RoiAlignParams params_;
};

// The output shape of a RoI pooling op: [R, C, output_height, output_width] from the rois
// input [R, k], the features input [N, C, H, W] and the output_height / output_width attributes
// (RoIAlign, RoIAlignRotated and the multi-level variants): float32, or with typed_as_features (an
// output of the type parameter T) the features' dtype.
Status InferRoiPoolingShape(const ShapeInference& infer, size_t features_input, size_t rois_input,
                            bool typed_as_features = false);

}  // namespace opbridge::ort
