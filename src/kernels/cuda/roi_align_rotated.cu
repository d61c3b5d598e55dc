// RoIAlignRotated CUDA kernel, and its multi-level form (mmrotate's RotatedSingleRoIExtractor): a
// thread per RoI maps it to its feature map (the finest_scale rule on sqrt(w * h) and mmrotate's
// optional rescale, for the multi-level form with more than one map) and plans its sampling grid at
// that map's scale (shared::MakeRotatedGeometry: the centre, bins, cos and sin of the angle, the
// grid's size), checking its batch index and sample limits; then a thread per output element
// (RoI, channel, bin), consecutive threads on consecutive bins of one plane, walks its bin's
// grid_h x grid_w points in the CPU kernel's order, each point's taps made by
// shared::MakeRotatedTaps and sampled by shared::BilinearSample, and divides the sum by the grid's
// count: the CPU kernels' values bit for bit. Rotation makes the sampling non-separable, so unlike
// RoIAlign's kernel nothing is shared between a bin's rows and columns.
//
// Expected time on an H100 for the bench's roi_align_rotated ([1, 256, 128, 128] features, 1000
// RoIs, 7 x 7, sampling 2): 12.5 M outputs of 4 points each (50 M taps of some 40 instructions and 4
// loads, mostly L1 and L2 hits: the 16 MB map stays in L2), some 2 G instructions: about 20-30 us,
// against 23.8 ms for the CPU kernel inside a CUDA session on an H200 (gpu.md). The longest chain is
// one bin's points (grid_h x grid_w; with adaptive sampling, the RoI's side over the output's).
#include "kernels/cuda/roi_align_rotated.h"

#include <math.h>

#include "core/multi_level_rotated_roi_align.h"
#include "core/roi_levels.h"
#include "core/work_limits.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/shared/roi_align_rotated_grid.h"

namespace opbridge::cuda {
namespace {

struct RoiPlan {
  shared::RotatedGeometry geometry;
  int64_t batch_index;  // -1: the RoI's row is NaN (a batch index or a grid the CPU op refuses)
  int32_t map;          // -1: the RoI has no level, its row is 0 (as mmrotate's output, which starts as zeros)
};

__global__ void PlanKernel(RoiAlignRotatedParams p, const __grid_constant__ shared::FeatureMaps<float> maps,
                           RotatedLeveling leveling,
                           const float* rois, int64_t num_rois, int64_t batch, RoiPlan* plans,
                           unsigned long long* call_samples) {
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) {
    const float* roi = rois + r * 6;
    RoiPlan plan{};
    plan.batch_index = -1;
    plan.map = -1;
    if (!shared::IsRoiBatchIndex(roi[0], batch)) {  // the CPU op refuses every RoI's batch index first
      plans[r] = plan;
      continue;
    }
    float pooled[6];
    for (int k = 0; k < 6; ++k) pooled[k] = roi[k];
    int64_t level = 0;
    if (leveling.by_scale && maps.total > 1) {  // with one map every RoI is pooled from it as given
      level = shared::MmdetRoiLevel(sqrtf(roi[3] * roi[4]), leveling.finest_scale, maps.total);
      if (level >= 0 && leveling.rescale) MmrotateRoiRescale(roi + 1, leveling.roi_scale_factor, pooled + 1);
    }
    if (level < 0) {
      plan.batch_index = 0;  // a zero row
      plans[r] = plan;
      continue;
    }
    p.spatial_scale = maps.spatial_scale[level];
    plan.geometry = shared::MakeRotatedGeometry(p, pooled);
    if (shared::WithinSampleBudget(plan.geometry.grid_h, plan.geometry.grid_w, p.output_height, p.output_width)) {
      plan.batch_index = static_cast<int64_t>(roi[0]);
      plan.map = static_cast<int32_t>(level);
      // The call's work, as the CPU kernels count it (core/work_limits.h): only RoIs the CPU pools.
      atomicAdd(call_samples, static_cast<unsigned long long>(RoiSamples(
                                  p.output_height * p.output_width, plan.geometry.grid_h, plan.geometry.grid_w)));
    }
    plans[r] = plan;
  }
}

// Index: int32_t where the output's element count allows (the division and modulo of the element's
// coordinates are then a few instructions, not dozens).
template <class Index>
__global__ void PoolKernel(RoiAlignRotatedParams p, const __grid_constant__ shared::FeatureMaps<float> maps, Index channels,
                           const RoiPlan* plans,
                           const unsigned long long* call_samples, Index count, float* output) {
  const Index bins = static_cast<Index>(p.output_height * p.output_width);
  const Index out_w = static_cast<Index>(p.output_width);
  // Over the call's work limit, the CPU op refuses the whole call: every element is NaN.
  const bool refused = ExceedsCallWork(static_cast<int64_t>(*call_samples), channels);
  OPBRIDGE_CUDA_FOR(Index, e, count) {
    const Index bin = e % bins, rc = e / bins;
    const Index c = rc % channels, r = rc / channels;
    const RoiPlan& plan = plans[r];
    const shared::RotatedGeometry& g = plan.geometry;
    float* out = output + static_cast<int64_t>(e);
    if (refused) {
      *out = NAN;
      continue;
    }
    if (plan.map < 0) {
      *out = plan.batch_index < 0 ? NAN : 0.0f;  // refused by the CPU op, or no level
      continue;
    }
    if (!g.finite) {  // a NaN or infinite box: the result is undefined, say so with NaN (as the CPU kernel)
      *out = NAN;
      continue;
    }
    const int64_t height = maps.height[plan.map], width = maps.width[plan.map];
    const float* plane = maps.data[plan.map] + (plan.batch_index * channels + c) * height * width;
    const Index ph = bin / out_w, pw = bin % out_w;
    float sum = 0.0f;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const shared::BilinearTaps t = shared::MakeRotatedTaps(g, ph, pw, iy, ix, height, width);
        if (t.base != shared::kTapsOutside) sum += shared::BilinearSample(t, plane, width);
      }
    }
    *out = sum / g.count;
  }
}

}  // namespace

Status LeveledRoiAlignRotated(const RoiAlignRotatedParams& p, const shared::FeatureMaps<float>& maps,
                              const RotatedLeveling& leveling, int64_t batch, int64_t channels, const float* rois,
                              int64_t num_rois, float* output, ScratchAllocator& scratch, Stream stream) {
  ClearStaleError();
  const int64_t count = num_rois * channels * p.output_height * p.output_width;
  if (count == 0) return Status::Ok();
  if (maps.first != 0 || maps.count != maps.total) {
    return Status::Error("the rotated RoIAlign kernel takes all of a node's maps in one launch (at most ",
                         shared::kMaxFeatureMaps, "), got maps ", maps.first, " to ", maps.first + maps.count - 1,
                         " of ", maps.total);
  }
  const size_t bytes = ArenaBytes<RoiPlan>(num_rois) + ArenaBytes<unsigned long long>(1);
  ScratchBlock block(scratch, bytes);  // on the stream's scratch: freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  auto* plans = arena.Take<RoiPlan>(num_rois);
  auto* call_samples = arena.Take<unsigned long long>(1);
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(call_samples, 0, sizeof(unsigned long long), stream),
                                     "clearing the rotated RoIAlign work count"));
  PlanKernel<<<BlocksFor(num_rois), kThreads, 0, stream>>>(p, maps, leveling, rois, num_rois, batch, plans,
                                                           call_samples);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the rotated RoIAlign plan kernel", stream));
  if (FitsInt32(count)) {
    PoolKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(p, maps, static_cast<int32_t>(channels), plans,
                                                                  call_samples, static_cast<int32_t>(count), output);
  } else {
    PoolKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(p, maps, channels, plans, call_samples, count,
                                                                  output);
  }
  return LaunchStatus("the rotated RoIAlign kernel", stream);
}

Status RoiAlignRotated(const RoiAlignRotatedParams& p, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, Stream stream) {
  shared::FeatureMaps<float> maps{};
  maps.data[0] = input;
  maps.height[0] = height;
  maps.width[0] = width;
  maps.spatial_scale[0] = p.spatial_scale;
  maps.first = 0;
  maps.count = maps.total = 1;
  return LeveledRoiAlignRotated(p, maps, RotatedLeveling{}, batch, channels, rois, num_rois, output, scratch, stream);
}

}  // namespace opbridge::cuda
