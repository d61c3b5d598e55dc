// Multi-level RoIAlign CPU kernel (float32, NCHW). Framework-free.
#pragma once

#include <cstdint>

#include "core/multi_level_roi_align.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel

namespace opbridge::cpu {

// rois [num_rois, 5] (batch_index, x1, y1, x2, y2), batch indices already checked;
// levels[0 .. params.featmap_strides.size()); output [num_rois, channels, out_h, out_w]. Scratch:
// the rois grouped by level and their output rows (36 bytes per roi; see PoolRoisByLevel).
Status MultiLevelRoiAlign(const MultiLevelRoiAlignParams& params, const FeatureLevel* levels, int64_t batch,
                          int64_t channels, const float* rois, int64_t num_rois, float* output,
                          ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
