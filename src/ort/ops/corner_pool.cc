// Corner pooling ORT glue: opbridge::CornerPool and mmcv::MMCVCornerPool.
#include "ort/ops/corner_pool.h"

#include "kernels/cpu/corner_pool.h"

namespace opbridge::ort {

Status CornerPoolOp::Create(const Attrs& attrs, std::unique_ptr<CornerPoolOp>* op) {
  CornerPoolParams p;
  p.mode = static_cast<CornerPoolMode>(attrs.mode);  // one of the manifest's codes, which are the enum's
  *op = std::make_unique<CornerPoolOp>(p);
  return Status::Ok();
}

Status CornerPoolOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, float** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(CheckCornerPoolShape(input->shape));
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, CornerPoolOutputShape(input->shape), &data));
  *output = static_cast<float*>(data);
  return Status::Ok();
}

Status CornerPoolOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &output));
  return cpu::CornerPool(params_, input.Data<float>(), input.shape, output, OrtTaskRunner(api, ctx));
}

Status CornerPoolOp::InferShape(const ShapeInference& infer) {
  InferredShape input;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  InferredShape out;
  if (input.dims.size() == 4) {
    out = input;
  } else {
    out.dims = {-1, -1, -1, -1};
    out.symbols = {"", "", "", ""};
  }
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out);
}

}  // namespace opbridge::ort
