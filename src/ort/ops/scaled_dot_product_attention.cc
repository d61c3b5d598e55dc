// Scaled dot-product attention ORT glue: opbridge::ScaledDotProductAttention and
// mmdeploy::ScaledDotProductAttentionTRT.
#include "ort/ops/scaled_dot_product_attention.h"

#include "core/scaled_dot_product_attention.h"
#include "kernels/cpu/scaled_dot_product_attention.h"

namespace opbridge::ort {

Status ScaledDotProductAttentionOp::Create(const Attrs& attrs, std::unique_ptr<ScaledDotProductAttentionOp>* op) {
  *op = std::make_unique<ScaledDotProductAttentionOp>();
  return Status::Ok();
}

Status ScaledDotProductAttentionOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor q, k, v, mask;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &q));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &k));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &v));
  size_t inputs = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &inputs));
  if (inputs > 3) OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 3, &mask));
  AttentionSizes sizes;
  OPBRIDGE_RETURN_IF_ERROR(CheckAttentionShapes(q.shape, k.shape, v.shape, mask.present, mask.shape, &sizes));
  void* out = nullptr;
  void* attn = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {sizes.batch, sizes.queries, sizes.value}, &out));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, {sizes.batch, sizes.queries, sizes.keys}, &attn));
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::ScaledDotProductAttention(q.Data<float>(), k.Data<float>(), v.Data<float>(),
                                        mask.present ? mask.Data<float>() : nullptr, sizes, static_cast<float*>(out),
                                        static_cast<float*>(attn), scratch, OrtTaskRunner(api, ctx));
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
