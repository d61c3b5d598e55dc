// RoIAlign CUDA kernel, in two launches: a plan per RoI (shared::MakeRoiPlan: its sampling grid and
// image, or a NaN row), then one thread per output element (RoI, channel, bin) computing the bin
// from its RoI's plan (shared::RoiAlignElement, torchvision's order of operations; the CPU tests run
// both functions). Threads of a warp take consecutive bins of one RoI and channel, so they read the
// same plan and neighbouring pixels.
//
// Expected time, roi_align.box (1000 RoIs, 256 channels, 7x7, sampling 2) on an H100: 12.5 M
// elements of 16 reads each, mostly L2 hits on the RoIs' windows of P2 (62 MB, about 256 KB of
// distinct reads per RoI); the 50 MB output at 3 TB/s is 17 us, the window reads from DRAM once
// (some 100 MB) 35 us, the element arithmetic (about 60 float operations, 32-bit index math) some
// 30 us: about 0.05-0.1 ms, against ORT's RoiAlign-16 0.34 ms and torchvision's 0.37 ms (gpu.md).
#include "kernels/cuda/roi_align.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/roi_align_sampling.h"

namespace opbridge::cuda {
namespace {

__global__ void RoiPlanKernel(RoiAlignParams p, const float* rois, int64_t num_rois, int64_t batch,
                              shared::RoiPlan* plans) {
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) { plans[r] = shared::MakeRoiPlan(p, rois + 5 * r, batch); }
}

template <class Index>
__global__ void RoiAlignKernel(RoiAlignParams p, const shared::RoiPlan* plans, const float* input, int64_t channels,
                               int64_t height, int64_t width, Index count, float* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    shared::RoiAlignElement<Index>(p, plans, input, channels, height, width, index, output);
  }
}

}  // namespace

Status RoiAlign(const RoiAlignParams& params, const float* input, int64_t batch, int64_t channels, int64_t height,
                int64_t width, const float* rois, int64_t num_rois, float* output, ScratchAllocator& device_scratch,
                Stream stream) {
  ClearStaleError();
  const int64_t count = num_rois * channels * params.output_height * params.output_width;
  if (count == 0) return Status::Ok();
  const size_t bytes = ArenaBytes<shared::RoiPlan>(num_rois);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  auto* plans = static_cast<shared::RoiPlan*>(block.data());
  RoiPlanKernel<<<BlocksFor(num_rois), kThreads, 0, stream>>>(params, rois, num_rois, batch, plans);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the RoIAlign plan kernel", stream));
  if (FitsInt32(count)) {
    RoiAlignKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(params, plans, input, channels, height, width,
                                                                      static_cast<int32_t>(count), output);
  } else {
    RoiAlignKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(params, plans, input, channels, height, width,
                                                                      count, output);
  }
  return LaunchStatus("the RoIAlign kernel", stream);
}

}  // namespace opbridge::cuda
