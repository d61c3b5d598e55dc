// Cumulative maximum and minimum (torch.cummax, torch.cummin): parameters, validation and the
// layout of the scan, shared by every backend.
//
// Numerics are PyTorch's (see docs/ops/cummax.md): along the axis, the running extreme and the
// index where it was reached, the latest index winning ties, NaN sticking once seen.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

enum class Extreme { kMax, kMin };

struct CumMaxParams {
  Extreme extreme = Extreme::kMax;  // cummax or cummin
  int64_t dim = 0;                  // the axis scanned; negative counts from the last axis
};

// dim against an input of rank `rank`, PyTorch's rule: dim in [-rank, rank - 1], where a scalar
// (rank 0) counts as rank 1 (it is scanned as one element). *axis is dim wrapped into [0, rank).
Status WrapCumMaxDim(int64_t dim, int64_t rank, int64_t* axis);

// The input viewed around the scanned axis: [outer, steps, inner] in row-major order, where steps
// is the axis' size, outer the product of the dims before it and inner of those after it. A
// scalar is [1, 1, 1]; a shape with an axis of 0 is [0, 0, 0].
struct ScanLayout {
  int64_t outer = 1;
  int64_t steps = 1;
  int64_t inner = 1;
};
ScanLayout CumMaxLayout(const Shape& shape, int64_t axis);

}  // namespace opbridge
