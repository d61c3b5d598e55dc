// Multi-scale deformable attention CUDA kernel (float32). Framework-free: raw device pointers, the
// levels' sizes on the host, stream.
#pragma once

#include <stdint.h>

#include "core/multi_scale_deformable_attention.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// value [N, S, M, D], sampling_locations [N, Lq, M, L, P, 2], attention_weights [N, Lq, M, L, P] and
// output [N, Lq, M * D] in device memory; spatial_shapes (L rows of H, W) and level_start_index (L)
// on the host, checked (CheckMsdaLevels). cpu::MultiScaleDeformableAttention's values bit for bit.
Status MultiScaleDeformableAttention(const MsdaDims& dims, const float* value, const int64_t* spatial_shapes,
                                     const int64_t* level_start_index, const float* sampling_locations,
                                     const float* attention_weights, float* output, Stream stream);

}  // namespace opbridge::cuda
