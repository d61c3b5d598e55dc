// Rotated NMS ORT glue.
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
  static Status InferShape(const ShapeInference& infer);

 private:
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
  static Status InferShape(const ShapeInference& infer);

 private:
  MulticlassNmsRotatedParams params_;
};

}  // namespace opbridge::ort
