// Corner pooling CPU kernel (float32, NCHW). Framework-free: raw pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/corner_pool.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge::cpu {

// input and output: [N, C, H, W] (`shape`). A shape of another rank is an error.
Status CornerPool(const CornerPoolParams& params, const float* input, const Shape& shape, float* output,
                  const TaskRunner& runner);

}  // namespace opbridge::cpu
