// Axis-aligned NMS ORT glue.
#pragma once

#include <memory>

#include "core/nms.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::Nms and mmcv::NonMaxSuppression: boxes [N, 4], scores [N] -> keep [K].
class NmsOp {
 public:
  explicit NmsOp(const NmsParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<NmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 protected:
  Status Run(const OrtApi& api, OrtKernelContext* ctx, bool with_categories) const;
  NmsParams params_;
};

// opbridge::BatchedNms: boxes [N, 4], scores [N], idxs [N] (int64 categories) -> keep [K].
class BatchedNmsOp : public NmsOp {
 public:
  using NmsOp::NmsOp;
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<BatchedNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
};

// opbridge::MulticlassNms: boxes [B, N, 4], scores [B, C, N] -> selected [K, 3] (batch, class, box).
class MulticlassNmsOp {
 public:
  explicit MulticlassNmsOp(const MulticlassNmsParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<MulticlassNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  MulticlassNmsParams params_;
};

// Shape inference of an op whose one output is [K] or [K, columns] with K known only at run
// time (columns 0: rank 1).
Status InferKeptRows(const ShapeInference& infer, ONNXTensorElementDataType type, int64_t columns);

}  // namespace opbridge::ort
