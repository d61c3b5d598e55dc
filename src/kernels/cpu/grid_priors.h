// Grid priors CPU kernel (mmdet's single_level_grid_priors). Framework-free: raw pointers and sizes.
#pragma once

#include <cstdint>

#include "core/grid_priors.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// output [H * W * A, 4]: row (y * W + x) * A + a is base_anchors[a] + (sx, sy, sx, sy) with
// sx = float(x) * float(stride_w) and sy = float(y) * float(stride_h), in float32 as PyTorch
// computes mmdet's formula (arange cast to float, times the stride, plus the base anchor).
Status GridPriors(const float* base_anchors, int64_t anchors, int64_t height, int64_t width,
                  const GridPriorsParams& params, float* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
