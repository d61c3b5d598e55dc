// Rotated feature align CPU kernel (float32, float16 or bfloat16 storage, NCHW). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/half_storage.h"
#include "core/parallel.h"
#include "core/rotated_feature_align.h"
#include "core/status.h"

namespace opbridge::cpu {

// features: [batch, channels, height, width]; best_rbboxes: [batch, height, width, 5] holding
// (y, x, w, h, angle in radians) per pixel; output: [batch, channels, height, width].
// Planes of more than 2^31 - 1 pixels are an error. T: the storage type of all three (float,
// shared::Float16 or shared::BFloat16): the float32 kernel's outputs on the stored values, each rounded
// once as it is written.
template <class T>
Status RotatedFeatureAlign(const RotatedFeatureAlignParams& params, const T* features, int64_t batch,
                           int64_t channels, int64_t height, int64_t width, const T* best_rbboxes, T* output,
                           const TaskRunner& runner);

}  // namespace opbridge::cpu
