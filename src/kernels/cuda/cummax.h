// Cumulative maximum / minimum and corner pooling CUDA kernels: running-extreme scans along one axis
// (torch.cummax, torch.cummin; mmcv's CornerPool). Framework-free: raw device pointers, shapes,
// params, device scratch and a stream.
#pragma once

#include <stdint.h>

#include "core/corner_pool.h"
#include "core/cummax.h"
#include "core/scratch.h"
#include "core/shape.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// cpu::CumMax's values and indices exactly (every value is a copy of an input element and every
// index the CPU kernel's; kernels/shared/extreme_scan.h says why the GPU's grouping gives them).
// input, values and indices: `shape` in device memory; T is float, double, int32_t or int64_t.
// scratch holds the running extremes of line segments when lines are scanned in pieces.
template <class T>
Status CumMax(const CumMaxParams& params, const T* input, const Shape& shape, T* values, int64_t* indices,
              ScratchAllocator& scratch, Stream stream);

// cpu::CornerPool's values exactly: input and output [N, C, H, W] in device memory.
Status CornerPool(const CornerPoolParams& params, const float* input, const Shape& shape, float* output,
                  ScratchAllocator& scratch, Stream stream);

}  // namespace opbridge::cuda
