// Multi-scale RoIAlign ORT glue.
#pragma once

#include <memory>

#include "core/multi_scale_roi_align.h"
#include "ort/generated/multi_scale_roi_align_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiScaleRoiAlign: rois [R, 5], then one or more feature maps -> [R, C, oh, ow].
class MultiScaleRoiAlignOp {
 public:
  using Attrs = MultiScaleRoiAlignAttrs;  // generated from the manifest
  explicit MultiScaleRoiAlignOp(const MultiScaleRoiAlignParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<MultiScaleRoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // multi_scale_roi_align_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  MultiScaleRoiAlignParams params_;
};

}  // namespace opbridge::ort
