// RoIAlignRotated CUDA kernel (float32, NCHW). Framework-free: raw device pointers, shapes, params,
// device scratch, stream.
#pragma once

#include <stdint.h>

#include "core/roi_align_rotated.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// input: [batch, channels, height, width]; rois: [num_rois, 6] (batch_index, cx, cy, w, h, theta);
// output: [num_rois, channels, out_h, out_w], all in device memory: cpu::RoiAlignRotated's values
// bit for bit (kernels/shared/roi_align_rotated_grid.h). With output_rows (device memory), RoI k
// writes output row output_rows[k] (the multi-level form). The RoIs are read on the device only, so
// the CPU op's checks of their values become defined results, without a synchronization: a RoI
// whose batch index is out of range or NaN (any, when batch is 0), or whose sampling grid exceeds
// the sample limits, gives a row of NaN. Scratch: 48 bytes per RoI (its planned grid).
Status RoiAlignRotated(const RoiAlignRotatedParams& params, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, Stream stream, const int64_t* output_rows = nullptr);

}  // namespace opbridge::cuda
