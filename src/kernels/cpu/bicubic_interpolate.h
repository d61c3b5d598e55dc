// Bicubic interpolation CPU kernel (PyTorch's upsample_bicubic2d). Framework-free: raw pointers,
// shapes and params.
#pragma once

#include <cstdint>

#include "core/bicubic_interpolate.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge::cpu {

// input [N, C, H, W] -> output [N, C, H_out, W_out] (BicubicInterpolateOutputShape), float32,
// with PyTorch's arithmetic: per axis the source scale (align_corners: (in - 1) / (out - 1), else
// 1 / scale_factor), source index, tap clamping and A = -0.75 weights; each output is
// sum_i wy_i * (sum_j wx_j * x[y_i, x_j]) in that order. scratch: per-task rows of the
// horizontal pass.
Status BicubicInterpolate(const float* input, const Shape& input_shape, const BicubicInterpolateParams& params,
                          const Shape& output_shape, float* output, ScratchAllocator& scratch,
                          const TaskRunner& runner);

}  // namespace opbridge::cpu
