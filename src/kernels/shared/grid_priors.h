// mmdet's grid priors (AnchorGenerator.single_level_grid_priors) as host-and-device functions, in
// float32 as PyTorch computes the formula: the CPU kernel (kernels/cpu/grid_priors.cc) and the CUDA
// kernel (kernels/cuda/grid_priors.cu) write every anchor with these.
#pragma once

#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// The shift of grid cell `cell` along an axis: float(cell) * stride (arange cast to float, times
// the stride). Index: the caller's index type (the CUDA kernel's int32_t converts in one instruction).
template <class Index>
OPBRIDGE_HD inline float GridPriorShift(Index cell, float stride) { return static_cast<float>(cell) * stride; }

// One anchor: the base anchor (x1, y1, x2, y2) plus (sx, sy, sx, sy).
OPBRIDGE_HD inline void GridPriorAnchor(const float* base, float sx, float sy, float* out) {
  out[0] = base[0] + sx;
  out[1] = base[1] + sy;
  out[2] = base[2] + sx;
  out[3] = base[3] + sy;
}

// Row `row` = (y * width + x) * anchors + a of the output [H * W * A, 4], in the index type of the
// kernel (int32_t where the output's float count allows).
template <class Index>
OPBRIDGE_HD inline void GridPriorRow(const float* base_anchors, Index anchors, Index width, float stride_w,
                                     float stride_h, Index row, float* out) {
  const Index a = row % anchors, cell = row / anchors;
  const Index x = cell % width, y = cell / width;
  GridPriorAnchor(base_anchors + a * 4, GridPriorShift(x, stride_w), GridPriorShift(y, stride_h), out);
}

}  // namespace opbridge::shared
