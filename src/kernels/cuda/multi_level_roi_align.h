// RoIAlign over a feature pyramid, CUDA kernel (NCHW; float32, float16 or bfloat16 storage with
// float32 arithmetic), for both multi-level RoIAlign ops:
// opbridge::MultiScaleRoiAlign (torchvision's LevelMapper) and opbridge::MultiLevelRoiAlign /
// mmdeploy::MMCVMultiLevelRoiAlign (mmdet's map_roi_levels and roi_rescale). Framework-free.
#pragma once

#include <stdint.h>

#include <vector>

#include "core/roi_align.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/shared/roi_align_levels.h"

namespace opbridge::cuda {

// rois: [num_rois, 5]; launches: the node's maps, shared::kMaxFeatureMaps a launch (maps.first ..);
// output: [num_rois, channels, out_h, out_w]; all in device memory. One thread per output
// element: each RoI gets its level on the device, so there is no grouping pass and no
// synchronization. Rows of RoIs whose level is not among `maps` are left for the launch that has
// it; a RoI without a level gets a zero row in the launch with maps.first == 0. As for RoIAlign, a
// RoI whose batch index is out of range or NaN, or whose sampling grid exceeds the sample limits,
// gives NaN (the CPU ops report an error there). params.spatial_scale is not read. A plan per RoI
// (about 56 bytes) comes from `device_scratch`.
// Every launch's RoIs are planned first, counting the call's work on the device (core/work_limits.h):
// a call beyond the limit is NaN throughout, where the CPU ops report the error. T is the storage type
// of the maps, the rois and the output (float, shared::Float16 or shared::BFloat16): the CPU kernel's
// bits, the float32 values rounded once.
template <class T>
Status LeveledRoiAlign(const RoiAlignParams& params, const std::vector<shared::FeatureMaps<T>>& launches,
                       const shared::RoiLeveling& leveling, int64_t batch, int64_t channels, const T* rois,
                       int64_t num_rois, T* output, ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
