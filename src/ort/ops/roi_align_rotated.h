// RoIAlignRotated ORT glue.
#pragma once

#include <memory>

#include "core/roi_align_rotated.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RoiAlignRotatedOp {
 public:
  explicit RoiAlignRotatedOp(const RoiAlignRotatedParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<RoiAlignRotatedOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  RoiAlignRotatedParams params_;
};

}  // namespace opbridge::ort
