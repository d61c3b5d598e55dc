// Rotated NMS ORT glue (CPU: nms_rotated.cc; CUDA: nms_rotated_cuda.cc).
#pragma once

#include <memory>

#include "core/nms_rotated.h"
#include "ort/generated/nms_rotated_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::NmsRotated: boxes [N, 5], scores [N], optional idxs [N] -> keep [K].
class NmsRotatedOp {
 public:
  using Attrs = NmsRotatedAttrs;  // generated from the manifest
  explicit NmsRotatedOp(const NmsRotatedParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<NmsRotatedOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_rotated_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs (idxs not present when the node has none), shapes checked.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                 InputTensor* idxs) const;

  NmsRotatedParams params_;
};

// opbridge::MulticlassNmsRotated and mmdeploy::NMSRotated: boxes [B, N, 5], scores [B, C, N]
// -> selected [K, 3] (batch, class, box).
class MulticlassNmsRotatedOp {
 public:
  using Attrs = MulticlassNmsRotatedAttrs;  // generated from the manifest
  explicit MulticlassNmsRotatedOp(const MulticlassNmsRotatedParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<MulticlassNmsRotatedOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_rotated_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs, shapes checked.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores) const;

  MulticlassNmsRotatedParams params_;
};

}  // namespace opbridge::ort
