// Mask pasting ORT glue.
#pragma once

#include <memory>

#include "core/paste_masks.h"
#include "ort/generated/paste_masks_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::PasteMasks: masks [N, 1, M, M], boxes [N, 4], image_size [2] -> [N, 1, H, W].
class PasteMasksOp {
 public:
  using Attrs = PasteMasksAttrs;  // generated from the manifest
  explicit PasteMasksOp(const PasteMasksParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<PasteMasksOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // paste_masks_cuda.cc; image_size on the host (manifest)
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their checks and the output [N, 1, H, W] (null when it has no
  // elements); size points at image_size (host memory on either provider).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* masks, InputTensor* boxes,
                 const int64_t** size, void** output) const;  // of the masks' dtype
  PasteMasksParams params_;
};

}  // namespace opbridge::ort
