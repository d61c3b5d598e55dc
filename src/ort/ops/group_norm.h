// Group normalization ORT glue.
#pragma once

#include <memory>

#include "core/group_norm.h"
#include "ort/generated/group_norm_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GroupNorm: num_groups and epsilon are attributes; scale and bias are optional.
class GroupNormOp {
 public:
  using Attrs = GroupNormAttrs;  // generated from the manifest
  explicit GroupNormOp(const GroupNormParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<GroupNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // group_norm_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  Status Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* scale,
                InputTensor* bias) const;
  GroupNormParams params_;
};

// The ONNX tutorial's group norm (onnx/tutorials, PyTorchCustomOperator): num_groups is a float32
// tensor input read at run time, scale and bias are required inputs, epsilon an attribute.
class TutorialGroupNormOp {
 public:
  using Attrs = TutorialGroupNormAttrs;  // generated from the manifest
  explicit TutorialGroupNormOp(float epsilon) : epsilon_(epsilon) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<TutorialGroupNormOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // group_norm_cuda.cc; num_groups on the host (manifest)
  static Status InferShape(const ShapeInference& infer);

 private:
  Status Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, int64_t* num_groups,
                InputTensor* scale, InputTensor* bias) const;
  float epsilon_;
};

// Declares output 0 as a tensor of input 0's dtype and shape (the normalization ops), when input 0's
// rank and dtype are known.
Status InferShapeOfInput(const ShapeInference& infer);

// Allocates output 0 with the input's shape (checked) and dtype; *has_values is false when a dim is 0
// (the product of the other dims may not even fit in int64 then).
Status AllocateNormOutput(const OrtApi& api, OrtKernelContext* ctx, const InputTensor& input, void** output,
                          bool* has_values);

// The CUDA twins' common run (group_norm_cuda.cc): normalizes `input` (device memory, shapes
// checked) in num_groups groups into output 0; absent scale and bias are 1 and 0.
Status RunGroupNormCuda(const OrtApi& api, OrtKernelContext* ctx, const InputTensor& input, int64_t num_groups,
                        const InputTensor& scale, const InputTensor& bias, float epsilon);

}  // namespace opbridge::ort
