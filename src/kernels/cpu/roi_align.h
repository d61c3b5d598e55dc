// RoIAlign CPU kernel (float32, NCHW). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/roi_align.h"
#include "core/status.h"
#include "core/work_limits.h"

namespace opbridge::cpu {

// input: [batch, channels, height, width]; rois: [num_rois, 5], already checked with
// CheckRoiAlignRois; output: [num_rois, channels, out_h, out_w]. With output_rows, roi k writes
// output row output_rows[k] instead of row k (multi-level RoIAlign pools each level's rois into
// their places in one output).
Status RoiAlign(const RoiAlignParams& params, const float* input, int64_t batch, int64_t channels,
                int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                const TaskRunner& runner, const int64_t* output_rows = nullptr, CallSampleWork* work = nullptr);

}  // namespace opbridge::cpu
