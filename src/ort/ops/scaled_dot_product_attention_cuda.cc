// Scaled dot-product attention ORT glue, CUDA twin: opbridge::ScaledDotProductAttention and
// mmdeploy::ScaledDotProductAttentionTRT on the CUDA execution provider, with the CPU op's checks
// (all of shapes, known on the host).
#include "kernels/cuda/scaled_dot_product_attention.h"
#include "ort/cuda_glue.h"
#include "ort/ops/scaled_dot_product_attention.h"

namespace opbridge::ort {

Status ScaledDotProductAttentionOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::ScaledDotProductAttention(call.q.Data<float>(), call.k.Data<float>(), call.v.Data<float>(),
                                         call.mask.present ? call.mask.Data<float>() : nullptr, call.sizes, call.out,
                                         call.attn, cuda.stream);
}

}  // namespace opbridge::ort
