// Group normalization ORT glue.
#pragma once

#include <memory>

#include "core/group_norm.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GroupNorm: num_groups and epsilon are attributes; scale and bias are optional.
class GroupNormOp {
 public:
  explicit GroupNormOp(const GroupNormParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<GroupNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  GroupNormParams params_;
};

// The ONNX tutorial's group norm (onnx/tutorials, PyTorchCustomOperator): num_groups is a float32
// tensor input read at run time, scale and bias are required inputs, epsilon an attribute.
class TutorialGroupNormOp {
 public:
  explicit TutorialGroupNormOp(float epsilon) : epsilon_(epsilon) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<TutorialGroupNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  float epsilon_;
};

// Declares output 0 as a float32 tensor of input 0's shape (the normalization ops), when
// input 0's rank is known.
Status InferShapeOfInput(const ShapeInference& infer);

// Allocates output 0 with the input's shape (checked); *has_values is false when a dim is 0 (the
// product of the other dims may not even fit in int64 then).
Status AllocateNormOutput(const OrtApi& api, OrtKernelContext* ctx, const Shape& shape, float** output,
                          bool* has_values);

}  // namespace opbridge::ort
