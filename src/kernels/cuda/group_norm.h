// Group normalization CUDA kernel (float32, float16 or bfloat16 storage with float32 arithmetic,
// [N, C, *]), also instance normalization's (G = C). Framework-free.
#pragma once

#include <stdint.h>

#include "core/group_norm.h"
#include "core/half_storage.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// input, output: [layout.batch, layout.channels, layout.spatial] in device memory, channels
// divisible by num_groups; scale, bias: [channels] each, or nullptr for 1 and 0. Scratch comes from
// `device_scratch` (device memory). The results equal cpu::GroupNorm's bit for bit: the same
// float64 sums in the same order (kernels/shared/group_norm_stats.h). T is the storage type of input,
// scale, bias and output (float, shared::Float16 or shared::BFloat16), as cpu::GroupNorm's.
template <class T>
Status GroupNorm(const T* input, const NormLayout& layout, int64_t num_groups, const T* scale, const T* bias,
                 float epsilon, T* output, ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
