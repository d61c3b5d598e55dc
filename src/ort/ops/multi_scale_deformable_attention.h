// Multi-scale deformable attention ORT glue.
#pragma once

#include <memory>

#include "core/multi_scale_deformable_attention.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiScaleDeformableAttention (no attributes).
class MultiScaleDeformableAttentionOp {
 public:
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info,
                       std::unique_ptr<MultiScaleDeformableAttentionOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

// mmdeploy::MMCVMultiScaleDeformableAttention: the same node with mmdeploy's im2col_step
// attribute, which is read (a value of the wrong type is reported) and ignored.
class MmdeployMultiScaleDeformableAttentionOp : public MultiScaleDeformableAttentionOp {
 public:
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info,
                       std::unique_ptr<MmdeployMultiScaleDeformableAttentionOp>* op);
};

}  // namespace opbridge::ort
