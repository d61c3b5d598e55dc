// Multi-scale deformable attention ORT glue.
#pragma once

#include <memory>

#include "core/multi_scale_deformable_attention.h"
#include "ort/generated/multi_scale_deformable_attention_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiScaleDeformableAttention (no attributes).
class MultiScaleDeformableAttentionOp {
 public:
  using Attrs = MultiScaleDeformableAttentionAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<MultiScaleDeformableAttentionOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

// mmdeploy::MMCVMultiScaleDeformableAttention: the same node with mmdeploy's im2col_step
// attribute, which is read (a value of the wrong type is reported) and ignored.
class MmdeployMultiScaleDeformableAttentionOp : public MultiScaleDeformableAttentionOp {
 public:
  using Attrs = MmdeployMultiScaleDeformableAttentionAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<MmdeployMultiScaleDeformableAttentionOp>* op);
};

}  // namespace opbridge::ort
