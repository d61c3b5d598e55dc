// Deformable convolution ORT glue: mmcv::MMCVDeformConv2d, mmdeploy::MMCVDeformConv2d,
// mmcv::MMCVModulatedDeformConv2d, mmdeploy::MMCVModulatedDeformConv2d, opbridge::DeformConv2d.
#include "ort/ops/deform_conv.h"

#include <atomic>

#include "kernels/cpu/deform_conv.h"

namespace opbridge::ort {
namespace {

constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

std::vector<AttrSpec> ConvAttrs() {
  return {IntsAttr("stride", {1, 1}), IntsAttr("padding", {0, 0}), IntsAttr("dilation", {1, 1}),
          IntAttr("groups", 1), IntAttr("deform_groups", 1)};
}

// Scratch for kernel tasks from the session's CPU allocator (thread-safe).
class OrtScratchAllocator final : public ScratchAllocator {
 public:
  OrtScratchAllocator(const OrtApi& api, OrtAllocator* allocator) : api_(api), allocator_(allocator) {}
  void* Allocate(size_t bytes) override { return allocator_->Alloc(allocator_, bytes); }
  void Free(void* data) override { allocator_->Free(allocator_, data); }

 private:
  const OrtApi& api_;
  OrtAllocator* allocator_;
};

}  // namespace

Status DeformConvOpBase::ReadParams(const AttrReader& attrs, DeformConvParams* params) {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1, deform_groups = 1;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Ints("stride", &stride));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Ints("padding", &padding));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Ints("dilation", &dilation));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("groups", &groups));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("deform_groups", &deform_groups));
  return MakeDeformConvParams(stride, padding, dilation, groups, deform_groups, params);
}

const OpSchema& DeformConvOp::Schema() {
  static const OpSchema schema = [] {
    OpSchema s{{{"input", kFloat, false}, {"offset", kFloat, false}, {"weight", kFloat, false}},
               {{"output", kFloat, false}},
               ConvAttrs()};
    // mmcv's exporter also writes these two; the kernel has no use for them.
    s.attrs.push_back(IntAttr("bias", 0));
    s.attrs.push_back(IntAttr("im2col_step", 32));
    return s;
  }();
  return schema;
}

const OpSchema& ModulatedDeformConvOp::Schema() {
  static const OpSchema schema{{{"input", kFloat, false}, {"offset", kFloat, false}, {"mask", kFloat, false},
                                {"weight", kFloat, false}, {"bias", kFloat, true}},
                               {{"output", kFloat, false}},
                               ConvAttrs()};
  return schema;
}

const OpSchema& DeformConv2dOp::Schema() {
  static const OpSchema schema{{{"input", kFloat, false}, {"offset", kFloat, false}, {"weight", kFloat, false},
                                {"mask", kFloat, true}, {"bias", kFloat, true}},
                               {{"output", kFloat, false}},
                               ConvAttrs()};
  return schema;
}

Status DeformConvOp::Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<DeformConvOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  DeformConvParams params;
  OPBRIDGE_RETURN_IF_ERROR(ReadParams(attrs, &params));
  int64_t unused = 0;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("bias", &unused));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("im2col_step", &unused));
  *op = std::make_unique<DeformConvOp>(params, kInputs);
  return Status::Ok();
}

Status ModulatedDeformConvOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                                     std::unique_ptr<ModulatedDeformConvOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  DeformConvParams params;
  OPBRIDGE_RETURN_IF_ERROR(ReadParams(attrs, &params));
  *op = std::make_unique<ModulatedDeformConvOp>(params, kInputs);
  return Status::Ok();
}

Status DeformConv2dOp::Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<DeformConv2dOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  DeformConvParams params;
  OPBRIDGE_RETURN_IF_ERROR(ReadParams(attrs, &params));
  *op = std::make_unique<DeformConv2dOp>(params, kInputs);
  return Status::Ok();
}

Status DeformConvOpBase::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
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

  DeformConvShapes shapes{input.shape, offset.shape, weight.shape,
                          mask.data ? &mask.shape : nullptr, bias.data ? &bias.shape : nullptr};
  // An absent optional input arrives as nullptr data; a present empty one has a shape.
  if (inputs_.mask >= 0 && static_cast<size_t>(inputs_.mask) < count && mask.data == nullptr && !mask.shape.empty()) {
    shapes.mask = &mask.shape;
  }
  if (inputs_.bias >= 0 && static_cast<size_t>(inputs_.bias) < count && bias.data == nullptr && !bias.shape.empty()) {
    shapes.bias = &bias.shape;
  }
  Shape out_shape;
  OPBRIDGE_RETURN_IF_ERROR(CheckDeformConvShapes(params_, shapes, &out_shape));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  if (NumElements(out_shape) == 0) return Status::Ok();

  OrtMemoryInfo* memory_info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(
      FromOrtStatus(api, api.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory_info)));
  OrtAllocator* allocator = nullptr;
  Status status = FromOrtStatus(api, api.KernelContext_GetAllocator(ctx, memory_info, &allocator));
  api.ReleaseMemoryInfo(memory_info);
  OPBRIDGE_RETURN_IF_ERROR(status);
  OrtScratchAllocator scratch(api, allocator);

  cpu::DeformConvArgs args;
  args.input = input.Data<float>();
  args.offset = offset.Data<float>();
  args.mask = shapes.mask ? mask.Data<float>() : nullptr;
  args.weight = weight.Data<float>();
  args.bias = shapes.bias ? bias.Data<float>() : nullptr;
  args.output = static_cast<float*>(output);
  args.batch = input.shape[0];
  args.channels = input.shape[1];
  args.height = input.shape[2];
  args.width = input.shape[3];
  args.out_channels = weight.shape[0];
  args.kernel_h = weight.shape[2];
  args.kernel_w = weight.shape[3];
  args.out_h = out_shape[2];
  args.out_w = out_shape[3];
  status = cpu::DeformConv(params_, args, scratch, OrtTaskRunner(api, ctx));
  api.ReleaseAllocator(allocator);
  return status;
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
  return infer.SetOutput(0, kFloat, out);
}

}  // namespace opbridge::ort
