// Rotated feature align CPU kernel (float32, NCHW). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/rotated_feature_align.h"
#include "core/status.h"

namespace opbridge::cpu {

// features: [batch, channels, height, width]; best_rbboxes: [batch, height, width, 5] holding
// (y, x, w, h, angle in radians) per pixel; output: [batch, channels, height, width].
// Planes of more than 2^31 - 1 pixels are an error.
Status RotatedFeatureAlign(const RotatedFeatureAlignParams& params, const float* features, int64_t batch,
                           int64_t channels, int64_t height, int64_t width, const float* best_rbboxes,
                           float* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
