// RoIAlign CPU kernel (NCHW; float32, float16 or bfloat16 storage with float32 arithmetic).
// Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/roi_align.h"
#include "core/status.h"
#include "core/work_limits.h"
#include "core/half_storage.h"

namespace opbridge::cpu {

// input: [batch, channels, height, width]; rois: [num_rois, 5], already checked with
// CheckRoiAlignRois; output: [num_rois, channels, out_h, out_w]. With output_rows, roi k writes
// output row output_rows[k] instead of row k (multi-level RoIAlign pools each level's rois into
// their places in one output).
//
// T is the storage type of input and output: float, shared::Float16 or shared::BFloat16
// (core/half_storage.h); R that of rois, T or float (the multi-level kernels hand over their RoIs
// grouped by level, and rescaled, in float32). Every value is computed from the stored values in
// float32, as the float32 kernel computes it, and rounded once as it is stored.
template <class T, class R = T>
Status RoiAlign(const RoiAlignParams& params, const T* input, int64_t batch, int64_t channels,
                int64_t height, int64_t width, const R* rois, int64_t num_rois, T* output,
                const TaskRunner& runner, const int64_t* output_rows = nullptr, CallSampleWork* work = nullptr);

}  // namespace opbridge::cpu
