// RoIAlign over a feature pyramid, CUDA kernel: one thread per output element (RoI, channel, bin),
// LeveledRoiAlignElement of kernels/shared/roi_align_levels.h (the CPU tests run that function
// too). Each thread computes its RoI's level itself (a few float operations) rather than reading
// it from a grouping pass: the grouping the CPU kernels do would cost a device-wide sort and a
// synchronization to size the launches.
#include "kernels/cuda/multi_level_roi_align.h"

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {
namespace {

__global__ void LeveledRoiAlignKernel(RoiAlignParams p, shared::FeatureMaps maps, shared::RoiLeveling leveling,
                                      int64_t batch, int64_t channels, const float* rois, int64_t count,
                                      float* output) {
  OPBRIDGE_CUDA_FOR(index, count) {
    shared::LeveledRoiAlignElement(p, maps, leveling, batch, channels, rois, index, output);
  }
}

}  // namespace

Status LeveledRoiAlign(const RoiAlignParams& params, const shared::FeatureMaps& maps,
                       const shared::RoiLeveling& leveling, int64_t batch, int64_t channels, const float* rois,
                       int64_t num_rois, float* output, Stream stream) {
  const int64_t count = num_rois * channels * params.output_height * params.output_width;
  if (count == 0) return Status::Ok();
  LeveledRoiAlignKernel<<<BlocksFor(count), kThreads, 0, stream>>>(params, maps, leveling, batch, channels, rois,
                                                                    count, output);
  return LaunchStatus("the multi-level RoIAlign kernel");
}

}  // namespace opbridge::cuda
