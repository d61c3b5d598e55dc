// Grid sampler ORT glue, CUDA twin: opbridge::GridSample, mmcv::grid_sampler and
// mmdeploy::grid_sampler on the CUDA execution provider, with the CPU op's checks.
#include "kernels/cuda/grid_sample.h"
#include "ort/cuda_glue.h"
#include "ort/ops/grid_sample.h"

namespace opbridge::ort {

Status GridSampleOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, grid;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &grid, &output));
  if (output == nullptr) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::GridSample(params_, input.Data<float>(), input.shape[0], input.shape[1], input.shape[2],
                          input.shape[3], grid.Data<float>(), grid.shape[1], grid.shape[2],
                          output, cuda.stream);
}

}  // namespace opbridge::ort
