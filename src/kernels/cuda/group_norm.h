// Group normalization CUDA kernel (float32, [N, C, *]), also instance normalization's (G = C).
// Framework-free.
#pragma once

#include <stdint.h>

#include "core/group_norm.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// input, output: [layout.batch, layout.channels, layout.spatial] in device memory, channels
// divisible by num_groups; scale, bias: [channels] each, or nullptr for 1 and 0. Scratch comes from
// `device_scratch` (device memory). The results equal cpu::GroupNorm's bit for bit: the same
// float64 sums in the same order (kernels/shared/group_norm_stats.h).
Status GroupNorm(const float* input, const NormLayout& layout, int64_t num_groups, const float* scale,
                 const float* bias, float epsilon, float* output, ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
