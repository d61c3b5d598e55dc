// Deformable convolution ORT glue: mmcv::MMCVDeformConv2d, mmdeploy::MMCVDeformConv2d,
// mmcv::MMCVModulatedDeformConv2d, mmdeploy::MMCVModulatedDeformConv2d, opbridge::DeformConv2d.
#include "ort/ops/deform_conv.h"

#include "kernels/cpu/deform_conv.h"

namespace opbridge::ort {

Status DeformConvOp::Create(const Attrs& attrs, std::unique_ptr<DeformConvOp>* op) {
  return CreateLayout(attrs, op);
}

Status ModulatedDeformConvOp::Create(const Attrs& attrs, std::unique_ptr<ModulatedDeformConvOp>* op) {
  return CreateLayout(attrs, op);
}

Status DeformConv2dOp::Create(const Attrs& attrs, std::unique_ptr<DeformConv2dOp>* op) {
  return CreateLayout(attrs, op);
}

Status DeformConvOpBase::Prepare(const OrtApi& api, OrtKernelContext* ctx, DeformConvArgs* args, bool* empty) const {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetInputCount(ctx, &count)));
  auto optional = [&](int index, InputTensor* t) -> Status {
    *t = InputTensor();
    if (index < 0 || static_cast<size_t>(index) >= count) return Status::Ok();
    return GetInput(api, ctx, static_cast<size_t>(index), t);
  };
  InputTensor input, offset, mask, weight, bias;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, inputs_.input, &input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, inputs_.offset, &offset));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, inputs_.weight, &weight));
  OPBRIDGE_RETURN_IF_ERROR(optional(inputs_.mask, &mask));
  OPBRIDGE_RETURN_IF_ERROR(optional(inputs_.bias, &bias));

  const DeformConvShapes shapes{input.shape, offset.shape, weight.shape, mask.present ? &mask.shape : nullptr,
                                bias.present ? &bias.shape : nullptr};
  Shape out_shape;
  OPBRIDGE_RETURN_IF_ERROR(CheckDeformConvShapes(params_, shapes, &out_shape));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, &output));  // the per-call limit
  *empty = NumElements(out_shape) == 0;
  args->input = input.Data<float>();
  args->offset = offset.Data<float>();
  args->mask = shapes.mask ? mask.Data<float>() : nullptr;
  args->weight = weight.Data<float>();
  args->bias = shapes.bias ? bias.Data<float>() : nullptr;
  args->output = static_cast<float*>(output);
  args->batch = input.shape[0];
  args->channels = input.shape[1];
  args->height = input.shape[2];
  args->width = input.shape[3];
  args->out_channels = weight.shape[0];
  args->kernel_h = weight.shape[2];
  args->kernel_w = weight.shape[3];
  args->out_h = out_shape[2];
  args->out_w = out_shape[3];
  return Status::Ok();
}

Status DeformConvOpBase::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  DeformConvArgs args;
  bool empty = false;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &args, &empty));
  if (empty) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::DeformConv(params_, args, scratch, OrtTaskRunner(api, ctx));
}

Status DeformConvOpBase::InferShapeOf(const ShapeInference& infer, DeformConvInputs inputs) {
  InferredShape input, weight, offset;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(inputs.input, &input));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(inputs.weight, &weight));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(inputs.offset, &offset));
  // N and C_out from input and weight; H_out and W_out are the offset's (the kernel checks them).
  InferredShape out;
  const bool in4 = input.dims.size() == 4, w4 = weight.dims.size() == 4, off4 = offset.dims.size() == 4;
  out.dims = {in4 ? input.dims[0] : -1, w4 ? weight.dims[0] : -1, off4 ? offset.dims[2] : -1, off4 ? offset.dims[3] : -1};
  out.symbols = {in4 ? input.symbols[0] : "", w4 ? weight.symbols[0] : "", off4 ? offset.symbols[2] : "",
                 off4 ? offset.symbols[3] : ""};
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out);
}

}  // namespace opbridge::ort
