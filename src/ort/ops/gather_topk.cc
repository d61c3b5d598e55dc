// Gather of top-k rows ORT glue: opbridge::GatherTopk and mmdeploy::GatherTopk.
#include "ort/ops/gather_topk.h"

#include "kernels/cpu/gather_topk.h"

namespace opbridge::ort {
namespace {

// The element type ORT gave output `index`, already allocated with `shape`.
Status OutputType(const OrtApi& api, OrtKernelContext* ctx, size_t index, const Shape& shape,
                  ONNXTensorElementDataType* type) {
  OrtValue* value = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(
      FromOrtStatus(api, api.KernelContext_GetOutput(ctx, index, shape.data(), shape.size(), &value)));
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.GetTensorTypeAndShape(value, &info)));
  Status status = FromOrtStatus(api, api.GetTensorElementType(info, type));
  api.ReleaseTensorTypeAndShapeInfo(info);
  return status;
}

}  // namespace

Status GatherTopkOp::Create(const Attrs& attrs, std::unique_ptr<GatherTopkOp>* op) {
  *op = std::make_unique<GatherTopkOp>();
  return Status::Ok();
}

Status GatherTopkOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &call->data));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &call->indices));
  Shape output_shape;
  OPBRIDGE_RETURN_IF_ERROR(CheckGatherTopkShapes(call->data.shape, call->indices.shape, &output_shape));
  call->layout = MakeGatherTopkLayout(call->data.shape, call->indices.shape);
  call->gathered_axis = static_cast<int64_t>(call->indices.shape.size()) - 1;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, output_shape, &call->output));
  // ORT types an output of "any type" like the node's last such input (indices) unless shape
  // inference sets it, which needs data's rank: a model that hides the rank gets an error, not
  // data copied into a buffer of another dtype.
  ONNXTensorElementDataType output_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OPBRIDGE_RETURN_IF_ERROR(OutputType(api, ctx, 0, output_shape, &output_type));
  const ONNXTensorElementDataType data_type = call->data.type;
  if (output_type != data_type) {
    return Status::Error("ORT typed the output ", DtypeName(output_type), " where data is ", DtypeName(data_type),
                         ": it does so when data's rank is unknown at session creation; give the model's data ",
                         "input a shape (its rank at least) so that shape inference types the output");
  }
  call->element_bytes =
      data_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || data_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 ? 4 : 8;
  return Status::Ok();
}

Status GatherTopkOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  const OrtTaskRunner runner(api, ctx);
  return ForIndexType(call.indices.type, [&](auto type) {
    using Index = decltype(type);
    const Index* indices = call.indices.Data<Index>();
    OPBRIDGE_RETURN_IF_ERROR(
        CheckGatherTopkIndices(indices, call.indices.shape, call.layout.candidates, call.gathered_axis));
    return cpu::GatherTopk(call.data.data, call.element_bytes, indices, call.layout, call.output, runner);
  });
}

Status GatherTopkOp::InferShape(const ShapeInference& infer) {
  InferredShape data, indices;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &data));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &indices));
  // ORT shows an unknown rank as rank 0; a rank error is reported at run time.
  if (indices.dims.empty() || data.dims.size() < indices.dims.size()) return Status::Ok();
  InferredShape output = indices;
  output.type = data.type;
  output.dims.insert(output.dims.end(), data.dims.begin() + static_cast<int64_t>(indices.dims.size()), data.dims.end());
  output.symbols.insert(output.symbols.end(), data.symbols.begin() + static_cast<int64_t>(indices.dims.size()),
                        data.symbols.end());
  if (data.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, data.type, output);
}

}  // namespace opbridge::ort
