// Instance normalization ORT glue: opbridge::InstanceNorm, mmcv::MMCVInstanceNormalization and
// mmdeploy::TRTInstanceNormalization. It runs the group normalization kernel with G = C.
#include "ort/ops/instance_norm.h"

#include "kernels/cpu/instance_norm.h"
#include "ort/ops/group_norm.h"

namespace opbridge::ort {

Status InstanceNormOp::Create(const Attrs& attrs, std::unique_ptr<InstanceNormOp>* op) {
  InstanceNormParams p;
  p.epsilon = attrs.epsilon;
  OPBRIDGE_RETURN_IF_ERROR(CheckInstanceNormParams(p));
  *op = std::make_unique<InstanceNormOp>(p);
  return Status::Ok();
}

Status InstanceNormOp::Inputs(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* scale,
                              InputTensor* bias) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scale));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, bias));
  return CheckInstanceNormShapes(input->shape, scale->shape, bias->shape);
}

Status InstanceNormOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &scale, &bias));
  void* output = nullptr;
  bool has_values = false;
  OPBRIDGE_RETURN_IF_ERROR(AllocateNormOutput(api, ctx, input, &output, &has_values));
  if (!has_values) return Status::Ok();
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    return cpu::InstanceNorm(input.Data<T>(), NormLayoutOf(input.shape), scale.Data<T>(), bias.Data<T>(),
                             params_.epsilon, static_cast<T*>(output), OrtTaskRunner(api, ctx));
  });
}

Status InstanceNormOp::InferShape(const ShapeInference& infer) { return InferShapeOfInput(infer); }

}  // namespace opbridge::ort
