// Matrix inverse ORT glue: opbridge::Inverse.
#include "ort/ops/inverse.h"

#include "kernels/cpu/inverse.h"
#include "ort/op_adapter.h"

namespace opbridge::ort {

Status InverseOp::Create(const Attrs& attrs, std::unique_ptr<InverseOp>* op) {
  InverseParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeInverseParams(attrs.check_errors, &p));
  *op = std::make_unique<InverseOp>(p);
  return Status::Ok();
}

Status InverseOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &call->input));
  const Shape& shape = call->input.shape;
  OPBRIDGE_RETURN_IF_ERROR(CheckInverseShape(shape));
  call->batch = InverseBatch(shape);
  call->order = InverseOrder(shape);
  size_t outputs = 0;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetOutputCount(ctx, &outputs)));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, shape, &output));
  call->output = static_cast<float*>(output);
  if (outputs > 1) {
    void* info = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, InverseInfoShape(shape), &info));
    call->info = static_cast<int32_t*>(info);
  }
  return Status::Ok();
}

Status InverseOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  // Without matrices, or with 0 x 0 ones (which are never singular), only an info output needs
  // writing: no scratch for a huge count of empty matrices.
  if ((call.batch == 0 || call.order == 0) && call.info == nullptr) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  // The kernel always reports every matrix's info: into the info output when the node has it,
  // else into scratch memory (check_errors reads it).
  ScratchBlock info_scratch(scratch, call.info == nullptr ? sizeof(int32_t) * call.batch : 0);
  int32_t* info = call.info != nullptr ? call.info : static_cast<int32_t*>(info_scratch.data());
  if (info == nullptr) return Status::Error("out of memory for ", call.batch, " matrices' info");
  OPBRIDGE_RETURN_IF_ERROR(cpu::Inverse(call.input.Data<float>(), call.batch, call.order, call.output, info, scratch,
                                        OrtTaskRunner(api, ctx)));
  if (params_.check_errors) return CheckInverseInfo(call.input.shape, info);
  return Status::Ok();
}

Status InverseOp::InferShape(const ShapeInference& infer) {
  InferredShape input;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, input));
  if (input.dims.size() < 2) return Status::Ok();  // unknown rank (or an error at run time)
  InferredShape info;
  info.dims.assign(input.dims.begin(), input.dims.end() - 2);
  info.symbols.assign(input.symbols.begin(), input.symbols.end() - 2);
  // The context does not say whether the node has the optional info output, and setting an
  // output a node lacks is an error: it is tried, and a failure means there is none. ORT before
  // 1.28 does not check and writes past its list of outputs: there info's shape is left to run
  // time (as TensorRT batched NMS's index).
  if (RegisteredRuntimeMinor() >= 28) (void)infer.SetOutput(1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, info);
  return Status::Ok();
}

}  // namespace opbridge::ort
