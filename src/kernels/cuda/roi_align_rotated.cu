// RoIAlignRotated CUDA kernel: a thread per RoI plans its sampling grid (shared::MakeRotatedGeometry:
// the centre, bins, cos and sin of the angle, the grid's size) and checks its batch index and sample
// limits; then a thread per output element (RoI, channel, bin), consecutive threads on consecutive
// bins of one plane, walks its bin's grid_h x grid_w points in the CPU kernel's order, each point's
// taps made by shared::MakeRotatedTaps and sampled by shared::BilinearSample, and divides the sum by
// the grid's count: the CPU kernel's values bit for bit. Rotation makes the sampling non-separable,
// so unlike RoIAlign's kernel nothing is shared between a bin's rows and columns.
//
// Expected time on an H100 for the bench's roi_align_rotated ([1, 256, 128, 128] features, 1000
// RoIs, 7 x 7, sampling 2): 12.5 M outputs of 4 points each (50 M taps of some 40 instructions and 4
// loads, mostly L1 and L2 hits: the 16 MB map stays in L2), some 2 G instructions: about 20-30 us,
// against 23.8 ms for the CPU kernel inside a CUDA session on an H200 (gpu.md). The longest chain is
// one bin's points (grid_h x grid_w; with adaptive sampling, the RoI's side over the output's).
#include "kernels/cuda/roi_align_rotated.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/roi_align_rotated_grid.h"

namespace opbridge::cuda {
namespace {

struct RoiPlan {
  shared::RotatedGeometry geometry;
  int64_t batch_index;  // -1: the RoI's row is NaN (a batch index or a grid the CPU op refuses)
};

__global__ void PlanKernel(RoiAlignRotatedParams p, const float* rois, int64_t num_rois, int64_t batch,
                           RoiPlan* plans) {
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) {
    const float* roi = rois + r * 6;
    RoiPlan plan;
    plan.geometry = shared::MakeRotatedGeometry(p, roi);
    const bool valid = shared::IsRoiBatchIndex(roi[0], batch) &&
                       shared::WithinSampleBudget(plan.geometry.grid_h, plan.geometry.grid_w, p.output_height,
                                                  p.output_width);
    plan.batch_index = valid ? static_cast<int64_t>(roi[0]) : -1;
    plans[r] = plan;
  }
}

// Index: int32_t where the output's element count allows (the division and modulo of the element's
// coordinates are then a few instructions, not dozens).
template <class Index>
__global__ void PoolKernel(RoiAlignRotatedParams p, const float* input, Index channels, int64_t height,
                           int64_t width, const RoiPlan* plans, Index count, const int64_t* output_rows,
                           float* output) {
  const Index bins = static_cast<Index>(p.output_height * p.output_width);
  const Index out_w = static_cast<Index>(p.output_width);
  OPBRIDGE_CUDA_FOR(Index, e, count) {
    const Index bin = e % bins, rc = e / bins;
    const Index c = rc % channels, r = rc / channels;
    const RoiPlan& plan = plans[r];
    const shared::RotatedGeometry& g = plan.geometry;
    const int64_t row = output_rows != nullptr ? output_rows[r] : r;
    float* out = output + (row * channels + c) * bins + bin;  // (int64 row)
    if (plan.batch_index < 0 || !g.finite) {  // refused by the CPU op, or a NaN or infinite box
      *out = NAN;
      continue;
    }
    const float* plane = input + (plan.batch_index * channels + c) * height * width;  // (int64 batch_index)
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

Status RoiAlignRotated(const RoiAlignRotatedParams& p, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, Stream stream, const int64_t* output_rows) {
  ClearStaleError();
  const int64_t count = num_rois * channels * p.output_height * p.output_width;
  if (count == 0) return Status::Ok();
  const size_t bytes = static_cast<size_t>(num_rois) * sizeof(RoiPlan);
  ScratchBlock block(scratch, bytes);  // on the stream's scratch: freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(bytes);
  auto* plans = static_cast<RoiPlan*>(block.data());
  PlanKernel<<<BlocksFor(num_rois), kThreads, 0, stream>>>(p, rois, num_rois, batch, plans);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the rotated RoIAlign plan kernel", stream));
  if (FitsInt32(count)) {
    PoolKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(p, input, static_cast<int32_t>(channels), height,
                                                                  width, plans, static_cast<int32_t>(count),
                                                                  output_rows, output);
  } else {
    PoolKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(p, input, channels, height, width, plans, count,
                                                                  output_rows, output);
  }
  return LaunchStatus("the rotated RoIAlign kernel", stream);
}

}  // namespace opbridge::cuda
