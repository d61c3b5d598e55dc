// Multi-scale deformable attention ORT glue.
#pragma once

#include <memory>
#include <vector>

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
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // multi_scale_deformable_attention_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 protected:
  // What both providers do first: the inputs, their checks (spatial_shapes and level_start_index are
  // read on the host, where ORT puts them for the CUDA provider too) and the allocated output, null
  // when it is empty.
  struct Call {
    InputTensor value, locations, weights;
    MsdaDims dims;
    std::vector<int64_t> shapes, starts;
    float* output = nullptr;
  };
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const;
};

// mmdeploy::MMCVMultiScaleDeformableAttention: the same node with mmdeploy's im2col_step
// attribute, which is read (a value of the wrong type is reported) and ignored.
class MmdeployMultiScaleDeformableAttentionOp : public MultiScaleDeformableAttentionOp {
 public:
  using Attrs = MmdeployMultiScaleDeformableAttentionAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<MmdeployMultiScaleDeformableAttentionOp>* op);
};

}  // namespace opbridge::ort
