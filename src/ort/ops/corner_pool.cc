// Corner pooling ORT glue: opbridge::CornerPool and mmcv::MMCVCornerPool.
#include "ort/ops/corner_pool.h"

#include "kernels/cpu/corner_pool.h"

namespace opbridge::ort {

const OpSchema& CornerPoolOp::Schema() {
  // `mode` is required, as in mmcv's ORT op (read with no fallback) and its TensorRT plugin.
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {RequiredIntAttr("mode")}};
  return schema;
}

Status CornerPoolOp::Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<CornerPoolOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  int64_t mode = 0;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("mode", &mode));
  CornerPoolParams p;
  OPBRIDGE_RETURN_IF_ERROR(CornerPoolModeFromInt(mode, &p.mode));
  *op = std::make_unique<CornerPoolOp>(p);
  return Status::Ok();
}

Status CornerPoolOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &input));
  OPBRIDGE_RETURN_IF_ERROR(CheckCornerPoolShape(input.shape));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, CornerPoolOutputShape(input.shape), &output));
  return cpu::CornerPool(params_, input.Data<float>(), input.shape, static_cast<float*>(output),
                         OrtTaskRunner(api, ctx));
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
