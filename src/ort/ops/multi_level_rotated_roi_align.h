// Multi-level rotated RoIAlign ORT glue (CPU: multi_level_rotated_roi_align.cc; CUDA:
// multi_level_rotated_roi_align_cuda.cc).
#pragma once

#include <memory>
#include <vector>

#include "core/multi_level_rotated_roi_align.h"
#include "ort/generated/multi_level_rotated_roi_align_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiLevelRotatedRoiAlign and mmdeploy::MMCVMultiLevelRotatedRoiAlign: rois [R, 6],
// then one feature map per featmap_strides entry -> [R, C, output_height, output_width].
class MultiLevelRotatedRoiAlignOp {
 public:
  using Attrs = MultiLevelRotatedRoiAlignAttrs;  // generated from the manifest
  explicit MultiLevelRotatedRoiAlignOp(const MultiLevelRotatedRoiAlignParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<MultiLevelRotatedRoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // multi_level_rotated_roi_align_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // The shape rule both providers check (PrepareMultiLevel's).
  Status CheckShapes(const Shape& rois, const std::vector<Shape>& features) const {
    return CheckMultiLevelRotatedRoiAlignShapes(params_, rois, features);
  }

  MultiLevelRotatedRoiAlignParams params_;
};

}  // namespace opbridge::ort
