// Corner pooling ORT glue, CUDA twin: opbridge::CornerPool and mmcv::MMCVCornerPool on the CUDA
// execution provider, with the CPU op's checks (of the shape, known on the host). The kernel is the
// running-extreme scan of cummax (kernels/cuda/cummax.cu).
#include "kernels/cuda/cummax.h"
#include "ort/cuda_glue.h"
#include "ort/ops/corner_pool.h"

namespace opbridge::ort {

Status CornerPoolOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &output));
  if (NumElements(input.shape) == 0) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return cuda::CornerPool(params_, input.Data<float>(), input.shape, output, cuda.scratch(), cuda.stream());
}

}  // namespace opbridge::ort
