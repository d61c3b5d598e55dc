// TensorRT batched NMS ORT glue.
#pragma once

#include <memory>

#include "core/trt_batched_nms.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::TrtBatchedNms and mmdeploy::TRTBatchedNMS: boxes [B, S, 1 or C, 4], scores [B, S, C]
// -> dets [B, keep_topk, 5], labels [B, keep_topk] (int32), optional index [B, keep_topk] (int32).
class TrtBatchedNmsOp {
 public:
  explicit TrtBatchedNmsOp(const TrtBatchedNmsParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<TrtBatchedNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 protected:
  static Status CreateWith(const OrtApi& api, const OrtKernelInfo* info, const OpSchema& schema, bool rotated,
                           TrtBatchedNmsParams* params);
  static Status InferShapeOf(const ShapeInference& infer, int64_t box_size, bool with_index);
  TrtBatchedNmsParams params_;
};

// opbridge::TrtBatchedRotatedNms and mmdeploy::TRTBatchedRotatedNMS: boxes [B, S, 1 or C, 5],
// scores [B, S, C] -> dets [B, keep_topk, 6], labels [B, keep_topk] (int32).
class TrtBatchedRotatedNmsOp : public TrtBatchedNmsOp {
 public:
  using TrtBatchedNmsOp::TrtBatchedNmsOp;
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<TrtBatchedRotatedNmsOp>* op);
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
