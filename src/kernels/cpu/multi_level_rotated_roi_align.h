// Multi-level rotated RoIAlign CPU kernel (float32, NCHW). Framework-free.
#pragma once

#include <cstdint>

#include "core/multi_level_rotated_roi_align.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel

namespace opbridge::cpu {

// rois [num_rois, 6] (batch_index, center_x, center_y, width, height, theta), batch indices
// already checked; levels[0 .. params.featmap_strides.size()); output [num_rois, channels, out_h,
// out_w]. Scratch: the rois grouped by level and their output rows (40 bytes per roi; see
// PoolRoisByLevel).
Status MultiLevelRotatedRoiAlign(const MultiLevelRotatedRoiAlignParams& params, const FeatureLevel<float>* levels,
                                 int64_t batch, int64_t channels, const float* rois, int64_t num_rois, float* output,
                                 ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
