// Rotated feature align CUDA kernel (float32, float16 or bfloat16 storage with float32 arithmetic, NCHW). Framework-free: raw device pointers, shapes,
// params, stream.
#pragma once

#include <stdint.h>

#include "core/half_storage.h"
#include "core/rotated_feature_align.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// features and output [N, C, H, W], best_rbboxes [N, H, W, 5], in device memory, shapes checked by
// CheckRotatedFeatureAlignShapes: cpu::RotatedFeatureAlign's values bit for bit
// (kernels/shared/rotated_feature_align_taps.h). T as cpu::RotatedFeatureAlign's.
template <class T>
Status RotatedFeatureAlign(const RotatedFeatureAlignParams& params, const T* features, int64_t batch,
                           int64_t channels, int64_t height, int64_t width, const T* best_rbboxes, T* output,
                           Stream stream);

}  // namespace opbridge::cuda
