// Matrix inverse ORT glue, CUDA twin: opbridge::Inverse on the CUDA execution provider, with the CPU
// op's checks of shapes and attributes. Nothing waits for the GPU: where the CPU op reports a
// singular matrix (check_errors = 1), the kernel writes that matrix's inverse as NaN, and the info
// output, where the node has it, says which matrices are singular, as on the CPU.
#include "kernels/cuda/inverse.h"
#include "ort/cuda_glue.h"
#include "ort/ops/inverse.h"

namespace opbridge::ort {

Status InverseOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  if ((call.batch == 0 || call.order == 0) && call.info == nullptr) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  ScratchBlock info_scratch(cuda.scratch(), call.info == nullptr ? sizeof(int32_t) * call.batch : 0);
  int32_t* info = call.info != nullptr ? call.info : static_cast<int32_t*>(info_scratch.data());
  if (info == nullptr) return Status::Error("out of GPU memory for ", call.batch, " matrices' info");
  return cuda::Inverse(call.input.Data<float>(), call.batch, call.order, call.output, info, params_.check_errors,
                       cuda.scratch(), cuda.stream());
}

}  // namespace opbridge::ort
