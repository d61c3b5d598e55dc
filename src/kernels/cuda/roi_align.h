// RoIAlign CUDA kernel (NCHW; float32, float16 or bfloat16 storage). Framework-free: raw device pointers, shapes, params, device
// scratch, stream.
#pragma once

#include <stdint.h>

#include "core/roi_align.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"
#include "core/half_storage.h"

namespace opbridge::cuda {

// input: [batch, channels, height, width]; rois: [num_rois, 5]; output: [num_rois, channels,
// out_h, out_w], all in device memory. Each thread block plans its RoI in shared memory; the scratch
// holds the call's work count (8 bytes).
// The rois
// are read on the device only, so the checks the CPU kernel makes on their values
// (CheckRoiAlignRois, CheckRoiSampleBudget) become defined results here, without a
// synchronization: a RoI whose batch index is out of range or NaN (any, when batch is 0), or whose
// sampling grid exceeds the sample limits, gives a row of NaN; a call beyond the work limit
// (core/work_limits.h, counted on the device by a pass over the RoIs first) is NaN throughout.
// T is the storage type of input, rois and output: float, shared::Float16 or shared::BFloat16, with
// float32 arithmetic (the CPU kernel's bits on the same stored values).
template <class T>
Status RoiAlign(const RoiAlignParams& params, const T* input, int64_t batch, int64_t channels, int64_t height,
                int64_t width, const T* rois, int64_t num_rois, T* output, ScratchAllocator& device_scratch,
                Stream stream);

}  // namespace opbridge::cuda
