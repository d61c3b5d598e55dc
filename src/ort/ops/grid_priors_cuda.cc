// Grid priors ORT glue, CUDA twin: opbridge::GridPriors and mmdeploy::GridPriorsTRT on the CUDA
// execution provider, with the CPU op's checks (every one is of shapes, known on the host).
#include "kernels/cuda/grid_priors.h"
#include "ort/cuda_glue.h"
#include "ort/ops/grid_priors.h"

namespace opbridge::ort {

Status GridPriorsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Grid g;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &g));
  if (g.anchors * g.height * g.width == 0) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::GridPriors(g.base_anchors, g.anchors, g.height, g.width, params_, g.output, cuda.stream);
}

}  // namespace opbridge::ort
