// RoIAlign CUDA kernel: one thread per output element (RoI, channel, bin), RoiAlignElement of
// kernels/shared/roi_align_sampling.h (torchvision's order of operations; the CPU tests run that
// function too). Threads of a warp take consecutive bins of one RoI and channel, so they share the
// RoI's geometry and read neighbouring pixels.
#include "kernels/cuda/roi_align.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/roi_align_sampling.h"

namespace opbridge::cuda {
namespace {

__global__ void RoiAlignKernel(RoiAlignParams p, const float* input, int64_t batch, int64_t channels, int64_t height,
                               int64_t width, const float* rois, int64_t count, float* output) {
  OPBRIDGE_CUDA_FOR(index, count) {
    shared::RoiAlignElement(p, input, batch, channels, height, width, rois, index, output);
  }
}

}  // namespace

Status RoiAlign(const RoiAlignParams& params, const float* input, int64_t batch, int64_t channels, int64_t height,
                int64_t width, const float* rois, int64_t num_rois, float* output, Stream stream) {
  const int64_t count = num_rois * channels * params.output_height * params.output_width;
  if (count == 0) return Status::Ok();
  RoiAlignKernel<<<BlocksFor(count), kThreads, 0, stream>>>(params, input, batch, channels, height, width, rois,
                                                             count, output);
  return LaunchStatus("the RoIAlign kernel");
}

}  // namespace opbridge::cuda
