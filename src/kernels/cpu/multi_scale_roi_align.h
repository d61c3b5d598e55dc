// Multi-scale RoIAlign CPU kernel (float32, NCHW). Framework-free.
#pragma once

#include <cstdint>

#include "core/multi_scale_roi_align.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// One feature map of the pyramid: [batch, channels, height, width].
struct FeatureLevel {
  const float* data;
  int64_t height, width;
};

// rois [num_rois, 5] (batch_index, x1, y1, x2, y2), batch indices already checked;
// levels[0 .. params.spatial_scales.size()); output [num_rois, channels, out_h, out_w]. Scratch:
// the rois of one level and their output rows (48 bytes per roi).
Status MultiScaleRoiAlign(const MultiScaleRoiAlignParams& params, const FeatureLevel* levels, int64_t batch,
                          int64_t channels, const float* rois, int64_t num_rois, float* output,
                          ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
