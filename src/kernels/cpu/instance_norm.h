// Instance normalization CPU kernel (float32, [N, C, *]): group normalization with one group per
// channel (kernels/cpu/group_norm.h). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/instance_norm.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// input, output: [layout.batch, layout.channels, layout.spatial]; scale, bias: [channels].
Status InstanceNorm(const float* input, const NormLayout& layout, const float* scale, const float* bias,
                    float epsilon, float* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
