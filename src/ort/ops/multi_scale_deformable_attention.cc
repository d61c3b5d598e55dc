// Multi-scale deformable attention ORT glue: opbridge::MultiScaleDeformableAttention and
// mmdeploy::MMCVMultiScaleDeformableAttention.
#include "ort/ops/multi_scale_deformable_attention.h"

#include <vector>

#include "kernels/cpu/multi_scale_deformable_attention.h"

namespace opbridge::ort {
namespace {

// An int32 or int64 tensor's elements as int64 (L or 2 L of them).
std::vector<int64_t> IndexValues(const InputTensor& tensor) {
  const int64_t count = NumElements(tensor.shape);
  std::vector<int64_t> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[i] = tensor.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 ? tensor.Data<int32_t>()[i]
                                                                   : tensor.Data<int64_t>()[i];
  }
  return values;
}

}  // namespace

Status MultiScaleDeformableAttentionOp::Create(const Attrs& attrs, std::unique_ptr<MultiScaleDeformableAttentionOp>* op) {
  *op = std::make_unique<MultiScaleDeformableAttentionOp>();
  return Status::Ok();
}

Status MmdeployMultiScaleDeformableAttentionOp::Create(const Attrs& attrs, std::unique_ptr<MmdeployMultiScaleDeformableAttentionOp>* op) {
  // im2col_step (mmdeploy's exporter writes it) is a batching detail: read (its kind checked), unused.
  *op = std::make_unique<MmdeployMultiScaleDeformableAttentionOp>();
  return Status::Ok();
}

Status MultiScaleDeformableAttentionOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const {
  InputTensor spatial_shapes, level_start_index;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &call->value));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &spatial_shapes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &level_start_index));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 3, &call->locations));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 4, &call->weights));
  OPBRIDGE_RETURN_IF_ERROR(CheckMsdaShapes(call->value.shape, spatial_shapes.shape, level_start_index.shape,
                                           call->locations.shape, call->weights.shape, &call->dims));
  call->shapes = IndexValues(spatial_shapes);
  call->starts = IndexValues(level_start_index);
  OPBRIDGE_RETURN_IF_ERROR(CheckMsdaLevels(call->shapes, call->starts, call->dims));
  const Shape out_shape = MsdaOutputShape(call->dims);
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  call->output = NumElements(out_shape) == 0 ? nullptr : static_cast<float*>(output);
  return Status::Ok();
}

Status MultiScaleDeformableAttentionOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  if (call.output == nullptr) return Status::Ok();
  return cpu::MultiScaleDeformableAttention(call.dims, call.value.Data<float>(), call.shapes.data(),
                                            call.starts.data(), call.locations.Data<float>(),
                                            call.weights.Data<float>(), call.output, OrtTaskRunner(api, ctx));
}

Status MultiScaleDeformableAttentionOp::InferShape(const ShapeInference& infer) {
  InferredShape value, locations;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &value));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(3, &locations));
  const bool value_known = value.dims.size() == 4, locations_known = locations.dims.size() == 6;
  InferredShape out;
  // [N, Lq, M * D]: N from value, Lq from sampling_locations, M * D when both are known.
  const int64_t heads = value_known ? value.dims[2] : -1, channels = value_known ? value.dims[3] : -1;
  int64_t row = -1;
  if (heads < 0 || channels < 0 || __builtin_mul_overflow(heads, channels, &row)) row = -1;
  out.dims = {value_known ? value.dims[0] : -1, locations_known ? locations.dims[1] : -1, row};
  out.symbols = {value_known ? value.symbols[0] : "", locations_known ? locations.symbols[1] : "", ""};
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out);
}

}  // namespace opbridge::ort
