// Running maximum / minimum scans along one axis: the engine of cummax / cummin and of corner
// pooling. Framework-free: raw pointers, sizes and a TaskRunner.
//
// The rule is PyTorch's (aten's cummax_cummin_helper): scanning x_0, x_1, ..., the running extreme
// starts at x_0, and x_s replaces it when x_s >= it (x_s <= it for the minimum), so that the latest
// of equal values wins, or when x_s is NaN, so that a NaN sticks once seen (no number replaces it,
// x >= NaN being false) while a later NaN still replaces it. values[s] is the running extreme after
// x_s and indices[s] the step at which it was taken.
#pragma once

#include <cstdint>

#include "core/cummax.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// Scans `in`, viewed as [outer, steps, inner] (row-major), along its middle axis: forward, or with
// `reverse` from the last step to the first (step s is then position steps - 1 - s, and indices
// hold steps). values is laid out like in; indices too, or null for values only. T is float,
// double, int32_t or int64_t. Every output element is written by exactly one task.
template <class T>
Status ScanAxis(Extreme extreme, const T* in, const ScanLayout& layout, bool reverse, T* values, int64_t* indices,
                const TaskRunner& runner);

}  // namespace opbridge::cpu
