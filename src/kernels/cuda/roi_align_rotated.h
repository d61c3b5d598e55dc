// RoIAlignRotated CUDA kernel and its multi-level form (float32, NCHW). Framework-free: raw device
// pointers, shapes, params, device scratch, stream.
#pragma once

#include <stdint.h>

#include "core/roi_align_rotated.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/shared/roi_align_levels.h"

namespace opbridge::cuda {

// input: [batch, channels, height, width]; rois: [num_rois, 6] (batch_index, cx, cy, w, h, theta);
// output: [num_rois, channels, out_h, out_w], all in device memory: cpu::RoiAlignRotated's values
// bit for bit (kernels/shared/roi_align_rotated_grid.h). The RoIs are read on the device only, so
// the CPU op's checks of their values become defined results, without a synchronization: a RoI
// whose batch index is out of range or NaN (any, when batch is 0), or whose sampling grid exceeds
// the sample limits, gives a row of NaN, and a call beyond the work limit (core/work_limits.h,
// counted on the device) is NaN throughout. Scratch: 72 bytes per RoI (its planned grid) and the
// call's work count.
Status RoiAlignRotated(const RoiAlignRotatedParams& params, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, Stream stream);

// How the multi-level form maps a RoI to a map (mmrotate's RotatedSingleRoIExtractor): by_scale
// false (the single-map op) pools every RoI from map 0 as given.
struct RotatedLeveling {
  bool by_scale = false;
  int64_t finest_scale = 56;
  bool rescale = false;
  float roi_scale_factor = 1.0f;
};

// The multi-level form: every map of the node in `maps` (one launch: at most shared::kMaxFeatureMaps,
// the op's limit), map l pooled at maps.spatial_scale[l] (which replaces params.spatial_scale):
// cpu::MultiLevelRotatedRoiAlign's values bit for bit, a RoI without a level a zero row, and NaN
// rows where the single-map form gives them.
Status LeveledRoiAlignRotated(const RoiAlignRotatedParams& params, const shared::FeatureMaps<float>& maps,
                              const RotatedLeveling& leveling, int64_t batch, int64_t channels, const float* rois,
                              int64_t num_rois, float* output, ScratchAllocator& scratch, Stream stream);

}  // namespace opbridge::cuda
