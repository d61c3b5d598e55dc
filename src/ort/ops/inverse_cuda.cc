// Matrix inverse ORT glue, CUDA twin: opbridge::Inverse on the CUDA execution provider, with the CPU
// op's checks. Under check_errors the info of every matrix is copied to the host after the kernel
// and checked there, as on the CPU: the op's success depends on the data, so this one waits for the
// stream (as torch.linalg.inv does on CUDA); with check_errors = 0 nothing waits.
#include <vector>

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
  OPBRIDGE_RETURN_IF_ERROR(cuda::Inverse(call.input.Data<float>(), call.batch, call.order, call.output, info,
                                         cuda.scratch(), cuda.stream()));
  if (!params_.check_errors || call.batch == 0) return Status::Ok();
  std::vector<int32_t> host_info(static_cast<size_t>(call.batch));
  OPBRIDGE_RETURN_IF_ERROR(cuda::CopyToHost(host_info.data(), info, host_info.size() * sizeof(int32_t), cuda.stream(),
                                             "copying the inverse's info to the host"));
  return CheckInverseInfo(call.input.shape, host_info.data());
}

}  // namespace opbridge::ort
