// TensorRT batched NMS ORT glue.
#pragma once

#include <memory>

#include "core/trt_batched_nms.h"
#include "ort/generated/trt_batched_nms_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::TrtBatchedNms and mmdeploy::TRTBatchedNMS: boxes [B, S, 1 or C, 4], scores [B, S, C]
// -> dets [B, keep_topk, 5], labels [B, keep_topk] (int32), optional index [B, keep_topk] (int32).
class TrtBatchedNmsOp {
 public:
  using Attrs = TrtBatchedNmsAttrs;  // generated from the manifest
  explicit TrtBatchedNmsOp(const TrtBatchedNmsParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<TrtBatchedNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // trt_batched_nms_cuda.cc (axis-aligned)
  static Status InferShape(const ShapeInference& infer);

 protected:
  // The outputs of both Computes (index null when the node has no third output).
  struct Outputs {
    void* dets = nullptr;  // of the boxes' dtype
    int32_t* labels = nullptr;
    int32_t* index = nullptr;
  };
  // Both Computes: the inputs, their shape checks, and the outputs allocated.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                 Outputs* outputs) const;
  static Status InferShapeOf(const ShapeInference& infer, int64_t box_size, bool with_index);
  TrtBatchedNmsParams params_;
};

// opbridge::TrtBatchedRotatedNms and mmdeploy::TRTBatchedRotatedNMS: boxes [B, S, 1 or C, 5],
// scores [B, S, C] -> dets [B, keep_topk, 6], labels [B, keep_topk] (int32).
class TrtBatchedRotatedNmsOp : public TrtBatchedNmsOp {
 public:
  using Attrs = TrtBatchedRotatedNmsAttrs;  // generated from the manifest
  using TrtBatchedNmsOp::TrtBatchedNmsOp;
  static Status Create(const Attrs& attrs, std::unique_ptr<TrtBatchedRotatedNmsOp>* op);
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
