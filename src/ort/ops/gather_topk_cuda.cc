// Gather of top-k rows ORT glue, CUDA twin: opbridge::GatherTopk and mmdeploy::GatherTopk on the
// CUDA execution provider, with the CPU op's shape checks. The indices stay in device memory and are
// checked by the kernel as it reads them: a row an index out of range picks gets every bit set
// (NaN, or -1 in integer data) instead of the CPU op's error, so that nothing waits for the GPU.
#include "kernels/cuda/gather_topk.h"
#include "ort/cuda_glue.h"
#include "ort/ops/gather_topk.h"

namespace opbridge::ort {

Status GatherTopkOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  if (NumElements(call.indices.shape) == 0) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForIndexType(call.indices.type, [&](auto type) {
    using Index = decltype(type);
    return cuda::GatherTopk(call.data.data, call.element_bytes, call.indices.Data<Index>(), call.layout, call.output,
                            cuda.stream());
  });
}

}  // namespace opbridge::ort
