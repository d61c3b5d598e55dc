// Deformable convolution ORT glue, CUDA twin: the five identities of deform_conv.h on the CUDA
// execution provider, with the CPU op's checks (all of shapes and attributes, known on the host).
#include "kernels/cuda/deform_conv.h"
#include "ort/cuda_glue.h"
#include "ort/ops/deform_conv.h"

namespace opbridge::ort {

Status DeformConvOpBase::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  DeformConvArgs args;
  bool empty = false;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &args, &empty));
  if (empty) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return cuda::DeformConv(params_, args, cuda.scratch(), cuda.stream());
}

}  // namespace opbridge::ort
