// Grid sampler ORT glue, CUDA twin: opbridge::GridSample, mmcv::grid_sampler and
// mmdeploy::grid_sampler on the CUDA execution provider, with the CPU op's checks.
#include "kernels/cuda/grid_sample.h"
#include "ort/cuda_glue.h"
#include "ort/ops/grid_sample.h"

namespace opbridge::ort {

Status GridSampleOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, grid;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &grid, &output));
  if (output == nullptr) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  const Shape& in = input.shape;
  const Shape& g = grid.shape;
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    if (in.size() == 5) {
      return cuda::GridSample3d(params_, input.Data<T>(), in[0], in[1], in[2], in[3], in[4], grid.Data<T>(), g[1],
                                g[2], g[3], static_cast<T*>(output), cuda.stream);
    }
    return cuda::GridSample(params_, input.Data<T>(), in[0], in[1], in[2], in[3], grid.Data<T>(), g[1], g[2],
                            static_cast<T*>(output), cuda.stream);
  });
}

}  // namespace opbridge::ort
