// Group normalization CPU kernel (float32, float16 or bfloat16 storage, [N, C, *]), also instance
// normalization's (G = C). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/group_norm.h"
#include "core/half_storage.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// input, output: [layout.batch, layout.channels, layout.spatial]; channels divisible by
// num_groups; scale, bias: [channels] each, or nullptr for 1 and 0. T is the storage type of all
// four (float, shared::Float16 or shared::BFloat16): the float32 kernel's outputs on the stored
// values, each rounded once as it is written.
template <class T>
Status GroupNorm(const T* input, const NormLayout& layout, int64_t num_groups, const T* scale, const T* bias,
                 float epsilon, T* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
