// RoIAlignRotated CPU kernel (float32, NCHW). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/roi_align_rotated.h"
#include "core/scratch.h"
#include "core/status.h"
#include "core/work_limits.h"

namespace opbridge::cpu {

// input: [batch, channels, height, width]; rois: [num_rois, 6] (batch_index, center_x, center_y,
// width, height, theta), batch indices already checked with CheckRoiAlignRois; output:
// [num_rois, channels, out_h, out_w]. With output_rows, roi k writes output row output_rows[k]
// instead of row k (multi-level pooling writes each level's rois into their places in one output).
// Scratch: the sample points of a group of rois (up to 8 MB), and per task a copy of the images'
// channels it pools, interleaved (32 channels of every image a group reads).
Status RoiAlignRotated(const RoiAlignRotatedParams& params, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, const TaskRunner& runner, const int64_t* output_rows = nullptr,
                       CallSampleWork* work = nullptr);

}  // namespace opbridge::cpu
