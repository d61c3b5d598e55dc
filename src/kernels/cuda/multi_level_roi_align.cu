// RoIAlign over a feature pyramid, CUDA kernel, in two launches per group of up to
// shared::kMaxFeatureMaps maps: a plan per RoI (shared::MakeLeveledRoiPlan: its level from the op's
// mapper, then RoIAlign's plan at that level's scale), then one thread per output element
// (shared::LeveledRoiAlignElement; the CPU tests run both functions). Each RoI gets its level on the
// device rather than from a grouping pass: the grouping the CPU kernels do would cost a device-wide
// sort and a synchronization to size the launches. The level (a float64 log2, for the CPU's bits) and
// the grid are computed once per RoI, not per element.
//
// Time, roi_align.multilevel (1000 RoIs of 256 channels, 7x7, sampling 2, over the 4 FPN maps of an
// 800x1216 image): as RoIAlign's roi_align.box (kernels/cuda/roi_align.cu), the reads spread over
// four maps; measured on an H100 with 64-bit in-map math, 0.65 ms a run (ORT's CUDA session), 2.7x
// the standard-op export's ORT graph and 29x torchvision on CUDA.
#include "kernels/cuda/multi_level_roi_align.h"

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {
namespace {

__global__ void LeveledRoiPlanKernel(RoiAlignParams p, const __grid_constant__ shared::FeatureMaps maps,
                                     shared::RoiLeveling leveling, int64_t batch, const float* rois, int64_t num_rois,
                                     shared::RoiPlan* plans) {
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) {
    plans[r] = shared::MakeLeveledRoiPlan(p, maps, leveling, batch, rois + 5 * r);
  }
}

// At most 48 registers a thread (5 blocks of 256 threads an SM: 62% occupancy; at 40 it spills 56
// bytes): the gathers' latency is hidden by the warps in flight (kernels/cuda/roi_align.cu).
template <class Index>
__global__ void __launch_bounds__(kThreads, 5) LeveledRoiAlignKernel(RoiAlignParams p, const shared::RoiPlan* plans,
                                      const __grid_constant__ shared::FeatureMaps maps, int64_t channels, Index count,
                                      float* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    shared::LeveledRoiAlignElement<Index>(p, plans, maps, channels, index, output);
  }
}

}  // namespace

Status LeveledRoiAlign(const RoiAlignParams& params, const shared::FeatureMaps& maps,
                       const shared::RoiLeveling& leveling, int64_t batch, int64_t channels, const float* rois,
                       int64_t num_rois, float* output, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  const int64_t count = num_rois * channels * params.output_height * params.output_width;
  if (count == 0) return Status::Ok();
  const size_t bytes = ArenaBytes<shared::RoiPlan>(num_rois);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  auto* plans = static_cast<shared::RoiPlan*>(block.data());
  LeveledRoiPlanKernel<<<BlocksFor(num_rois), kThreads, 0, stream>>>(params, maps, leveling, batch, rois, num_rois,
                                                                     plans);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the multi-level RoIAlign plan kernel", stream));
  bool planes_fit_int32 = true;
  for (int64_t l = 0; l < maps.count; ++l) {
    planes_fit_int32 = planes_fit_int32 && FitsInt32(maps.height[l] * maps.width[l]);
  }
  if (FitsInt32(count) && planes_fit_int32) {
    LeveledRoiAlignKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(params, plans, maps, channels,
                                                                             static_cast<int32_t>(count), output);
  } else {
    LeveledRoiAlignKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(params, plans, maps, channels, count,
                                                                             output);
  }
  return LaunchStatus("the multi-level RoIAlign kernel", stream);
}

}  // namespace opbridge::cuda
