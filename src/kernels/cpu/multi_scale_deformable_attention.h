// Multi-scale deformable attention CPU kernel (float32). Framework-free: raw pointers, sizes.
#pragma once

#include <cstdint>

#include "core/multi_scale_deformable_attention.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// value: [N, S, M, D]; spatial_shapes: L rows of (H, W) and level_start_index: L first rows,
// both already checked with CheckMsdaLevels; sampling_locations: [N, Lq, M, L, P, 2] of (x, y)
// in [0, 1]; attention_weights: [N, Lq, M, L, P]; output: [N, Lq, M * D].
Status MultiScaleDeformableAttention(const MsdaDims& dims, const float* value, const int64_t* spatial_shapes,
                                     const int64_t* level_start_index, const float* sampling_locations,
                                     const float* attention_weights, float* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
