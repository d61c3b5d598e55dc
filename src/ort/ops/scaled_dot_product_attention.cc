// Scaled dot-product attention ORT glue: opbridge::ScaledDotProductAttention and
// mmdeploy::ScaledDotProductAttentionTRT.
#include "ort/ops/scaled_dot_product_attention.h"

#include "kernels/cpu/scaled_dot_product_attention.h"

namespace opbridge::ort {

Status ScaledDotProductAttentionOp::Create(const Attrs& attrs, std::unique_ptr<ScaledDotProductAttentionOp>* op) {
  *op = std::make_unique<ScaledDotProductAttentionOp>();
  return Status::Ok();
}

Status ScaledDotProductAttentionOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &call->q));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &call->k));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &call->v));
  size_t inputs = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &inputs));
  if (inputs > 3) OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 3, &call->mask));
  const AttentionSizes& s = call->sizes;
  OPBRIDGE_RETURN_IF_ERROR(CheckAttentionShapes(call->q.shape, call->k.shape, call->v.shape, call->mask.present,
                                                call->mask.shape, &call->sizes));
  void* out = nullptr;
  void* attn = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {s.batch, s.queries, s.value}, &out));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, {s.batch, s.queries, s.keys}, &attn));
  call->out = static_cast<float*>(out);
  call->attn = static_cast<float*>(attn);
  return Status::Ok();
}

Status ScaledDotProductAttentionOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::ScaledDotProductAttention(call.q.Data<float>(), call.k.Data<float>(), call.v.Data<float>(),
                                        call.mask.present ? call.mask.Data<float>() : nullptr, call.sizes, call.out,
                                        call.attn, scratch, OrtTaskRunner(api, ctx));
}

Status ScaledDotProductAttentionOp::InferShape(const ShapeInference& infer) {
  InferredShape q, k, v;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &q));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &k));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(2, &v));
  if (q.dims.size() != 3 || k.dims.size() != 3 || v.dims.size() != 3) return Status::Ok();
  InferredShape out = q, attn = q;
  out.dims[2] = v.dims[2];
  out.symbols[2] = v.symbols[2];
  attn.dims[2] = k.dims[1];
  attn.symbols[2] = k.symbols[1];
  OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out));
  return infer.SetOutput(1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, attn);
}

}  // namespace opbridge::ort
