// Multi-level RoIAlign ORT glue.
#pragma once

#include <memory>

#include "core/multi_level_roi_align.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign: rois [R, 5], then one feature
// map per featmap_strides entry -> [R, C, output_height, output_width].
class MultiLevelRoiAlignOp {
 public:
  explicit MultiLevelRoiAlignOp(const MultiLevelRoiAlignParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<MultiLevelRoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  MultiLevelRoiAlignParams params_;
};

}  // namespace opbridge::ort
