// Group normalization CPU kernel (float32, [N, C, *]), also instance normalization's (G = C).
// Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/group_norm.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// input, output: [layout.batch, layout.channels, layout.spatial]; channels divisible by
// num_groups; scale, bias: [channels] each, or nullptr for 1 and 0.
Status GroupNorm(const float* input, const NormLayout& layout, int64_t num_groups, const float* scale,
                 const float* bias, float epsilon, float* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
