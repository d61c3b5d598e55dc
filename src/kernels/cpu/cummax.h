// Cumulative maximum / minimum CPU kernel (torch.cummax, torch.cummin). Framework-free: raw
// pointers, shapes and params.
#pragma once

#include <cstdint>

#include "core/cummax.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge::cpu {

// input, values: `shape`, row-major; indices: `shape`, the position along params.dim where each
// running extreme was reached. T is float, double, int32_t or int64_t. A dim out of range for the
// shape is an error; a shape without elements is no work.
template <class T>
Status CumMax(const CumMaxParams& params, const T* input, const Shape& shape, T* values, int64_t* indices,
              const TaskRunner& runner);

}  // namespace opbridge::cpu
