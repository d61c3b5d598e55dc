// RoIAlign ORT glue.
#pragma once

#include <memory>

#include "core/roi_align.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

class RoiAlignOp {
 public:
  explicit RoiAlignOp(const RoiAlignParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<RoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  RoiAlignParams params_;
};

}  // namespace opbridge::ort
