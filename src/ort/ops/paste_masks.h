// Mask pasting ORT glue.
#pragma once

#include <memory>

#include "core/paste_masks.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::PasteMasks: masks [N, 1, M, M], boxes [N, 4], image_size [2] -> [N, 1, H, W].
class PasteMasksOp {
 public:
  explicit PasteMasksOp(const PasteMasksParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<PasteMasksOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  PasteMasksParams params_;
};

}  // namespace opbridge::ort
