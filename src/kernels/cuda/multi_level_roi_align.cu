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

#include "core/work_limits.h"
#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {
namespace {

template <class T>
__global__ void LeveledRoiPlanKernel(RoiAlignParams p, const __grid_constant__ shared::FeatureMaps<T> maps,
                                     shared::RoiLeveling leveling, int64_t batch, const T* rois, int64_t num_rois,
                                     shared::RoiPlan* plans, unsigned long long* call_samples) {
  const int64_t bins = p.output_height * p.output_width;
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) {
    const shared::RoiPlan plan = shared::MakeLeveledRoiPlan(p, maps, leveling, batch, rois + 5 * r);
    plans[r] = plan;
    // The call's work, as the CPU kernels count it (core/work_limits.h): the RoIs they pool.
    if (plan.kind == shared::RoiPlan::kPool) {
      atomicAdd(call_samples,
                static_cast<unsigned long long>(RoiSamples(bins, plan.geometry.grid_h, plan.geometry.grid_w)));
    }
  }
}

// At most 48 registers a thread (5 blocks of 256 threads an SM: 62% occupancy; at 40 it spills 56
// bytes): the gathers' latency is hidden by the warps in flight (kernels/cuda/roi_align.cu). On
// Turing, whose SM holds 4 such blocks, at most 64.
template <class Index, class T>
__global__ void __launch_bounds__(kThreads, OPBRIDGE_BLOCKS_PER_SM(5))
    LeveledRoiAlignKernel(RoiAlignParams p, const shared::RoiPlan* plans,
                          const __grid_constant__ shared::FeatureMaps<T> maps, int64_t channels, Index count,
                          const unsigned long long* call_samples, T* output) {
  // Over the call's work limit, the CPU ops refuse the whole call: every element is NaN (written by
  // the first launch).
  const bool refused = ExceedsCallWork(static_cast<int64_t>(*call_samples), channels);
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    if (refused) {
      if (maps.first == 0) shared::Store(output + index, NAN);
      continue;
    }
    shared::LeveledRoiAlignElement<Index>(p, plans, maps, channels, index, output);
  }
}

}  // namespace

template <class T>
Status LeveledRoiAlign(const RoiAlignParams& params, const std::vector<shared::FeatureMaps<T>>& launches,
                       const shared::RoiLeveling& leveling, int64_t batch, int64_t channels, const T* rois,
                       int64_t num_rois, T* output, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  const int64_t count = num_rois * channels * params.output_height * params.output_width;
  if (count == 0 || launches.empty()) return Status::Ok();
  const int64_t groups = static_cast<int64_t>(launches.size());
  const size_t bytes = ArenaBytes<shared::RoiPlan>(num_rois * groups) + ArenaBytes<unsigned long long>(1);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  auto* plans = arena.Take<shared::RoiPlan>(num_rois * groups);
  auto* call_samples = arena.Take<unsigned long long>(1);
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(call_samples, 0, sizeof(unsigned long long), stream),
                                     "clearing the multi-level RoIAlign work count"));
  // Every launch's plans (and the call's work) before any pooling.
  for (int64_t g = 0; g < groups; ++g) {
    LeveledRoiPlanKernel<<<BlocksFor(num_rois), kThreads, 0, stream>>>(params, launches[g], leveling, batch, rois,
                                                                       num_rois, plans + g * num_rois, call_samples);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the multi-level RoIAlign plan kernel", stream));
  }
  for (int64_t g = 0; g < groups; ++g) {
    const shared::FeatureMaps<T>& maps = launches[g];
    const shared::RoiPlan* group_plans = plans + g * num_rois;
    bool planes_fit_int32 = true;
    for (int64_t l = 0; l < maps.count; ++l) {
      planes_fit_int32 = planes_fit_int32 && FitsInt32(maps.height[l] * maps.width[l]);
    }
    if (FitsInt32(count) && planes_fit_int32) {
      LeveledRoiAlignKernel<int32_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(
          params, group_plans, maps, channels, static_cast<int32_t>(count), call_samples, output);
    } else {
      LeveledRoiAlignKernel<int64_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(params, group_plans, maps, channels,
                                                                               count, call_samples, output);
    }
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the multi-level RoIAlign kernel", stream));
  }
  return Status::Ok();
}

#define OPBRIDGE_LEVELED_ROI_ALIGN(T)                                                                             \
  template Status LeveledRoiAlign<T>(const RoiAlignParams&, const std::vector<shared::FeatureMaps<T>>&,          \
                                     const shared::RoiLeveling&, int64_t, int64_t, const T*, int64_t, T*,         \
                                     ScratchAllocator&, Stream);
OPBRIDGE_LEVELED_ROI_ALIGN(float)
OPBRIDGE_LEVELED_ROI_ALIGN(shared::Float16)
OPBRIDGE_LEVELED_ROI_ALIGN(shared::BFloat16)
#undef OPBRIDGE_LEVELED_ROI_ALIGN

}  // namespace opbridge::cuda
