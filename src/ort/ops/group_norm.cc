// Group normalization ORT glue: opbridge::GroupNorm, and the ONNX tutorial's group norm
// (mydomain::mygroupnorm, mydomain::testgroupnorm, org.pytorch.mydomain::testgroupnorm).
#include "ort/ops/group_norm.h"

#include <algorithm>

#include "kernels/cpu/group_norm.h"

namespace opbridge::ort {
namespace {

// Normalizes `input` in num_groups groups into output 0; absent scale and bias are 1 and 0.
Status RunGroupNorm(const OrtApi& api, OrtKernelContext* ctx, const InputTensor& input, int64_t num_groups,
                    const InputTensor& scale, const InputTensor& bias, float epsilon) {
  void* output = nullptr;
  bool has_values = false;
  OPBRIDGE_RETURN_IF_ERROR(AllocateNormOutput(api, ctx, input, &output, &has_values));
  if (!has_values) return Status::Ok();
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    return cpu::GroupNorm(input.Data<T>(), NormLayoutOf(input.shape), num_groups,
                          scale.present ? scale.Data<T>() : nullptr, bias.present ? bias.Data<T>() : nullptr, epsilon,
                          static_cast<T*>(output), OrtTaskRunner(api, ctx));
  });
}

}  // namespace

Status InferShapeOfInput(const ShapeInference& infer) {
  InferredShape input;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  // Unknown rank (or a scalar, refused at run time), or an unknown dtype (ORT sets it from the inputs).
  if (input.dims.empty() || input.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, input.type, input);
}

Status AllocateNormOutput(const OrtApi& api, OrtKernelContext* ctx, const InputTensor& input, void** output,
                          bool* has_values) {
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, input.shape, output, input.type));
  *has_values = std::find(input.shape.begin(), input.shape.end(), 0) == input.shape.end();
  return Status::Ok();
}


Status GroupNormOp::Create(const Attrs& attrs, std::unique_ptr<GroupNormOp>* op) {
  GroupNormParams p;
  p.num_groups = attrs.num_groups;
  p.epsilon = attrs.epsilon;
  OPBRIDGE_RETURN_IF_ERROR(CheckGroupNormParams(p));
  *op = std::make_unique<GroupNormOp>(p);
  return Status::Ok();
}

Status GroupNormOp::Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* scale,
                           InputTensor* bias) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scale));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, bias));
  return CheckGroupNormShapes(input->shape, params_.num_groups, scale->present ? &scale->shape : nullptr,
                              bias->present ? &bias->shape : nullptr);
}

Status GroupNormOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &scale, &bias));
  return RunGroupNorm(api, ctx, input, params_.num_groups, scale, bias, params_.epsilon);
}

Status GroupNormOp::InferShape(const ShapeInference& infer) { return InferShapeOfInput(infer); }

Status TutorialGroupNormOp::Create(const Attrs& attrs, std::unique_ptr<TutorialGroupNormOp>* op) {
  OPBRIDGE_RETURN_IF_ERROR(CheckNormEpsilon(attrs.epsilon));
  *op = std::make_unique<TutorialGroupNormOp>(attrs.epsilon);
  return Status::Ok();
}

Status TutorialGroupNormOp::Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, int64_t* num_groups,
                                   InputTensor* scale, InputTensor* bias) const {
  InputTensor groups;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &groups));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, scale));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 3, bias));
  OPBRIDGE_RETURN_IF_ERROR(CheckNumGroupsTensorShape(groups.shape));
  float groups_value = 0.0f;
  OPBRIDGE_RETURN_IF_ERROR(FirstFloatOf(groups, &groups_value));  // of the input's dtype
  OPBRIDGE_RETURN_IF_ERROR(NumGroupsFromValue(groups_value, num_groups));
  return CheckGroupNormShapes(input->shape, *num_groups, &scale->shape, &bias->shape);
}

Status TutorialGroupNormOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  int64_t num_groups = 0;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &num_groups, &scale, &bias));
  return RunGroupNorm(api, ctx, input, num_groups, scale, bias, epsilon_);
}

Status TutorialGroupNormOp::InferShape(const ShapeInference& infer) { return InferShapeOfInput(infer); }

}  // namespace opbridge::ort
