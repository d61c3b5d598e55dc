// Instance normalization CPU kernel (float32, float16 or bfloat16 storage, [N, C, *]): group
// normalization with one group per channel (kernels/cpu/group_norm.h). Framework-free: raw pointers,
// shapes and params.
#pragma once

#include <cstdint>

#include "core/half_storage.h"
#include "core/instance_norm.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// input, output: [layout.batch, layout.channels, layout.spatial]; scale, bias: [channels].
// T: the storage type of all four, as cpu::GroupNorm's.
template <class T>
Status InstanceNorm(const T* input, const NormLayout& layout, const T* scale, const T* bias, float epsilon,
                    T* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
