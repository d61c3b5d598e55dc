// Bicubic interpolation CUDA kernel (PyTorch's upsample_bicubic2d with a scale factor, float32,
// NCHW). Framework-free: raw device pointers, shapes, params, stream.
#pragma once

#include "core/bicubic_interpolate.h"
#include "core/shape.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// input [N, C, H, W] and output [N, C, H_out, W_out] (BicubicInterpolateOutputShape) in device
// memory: cpu::BicubicInterpolate's values bit for bit (kernels/shared/bicubic_taps.h).
Status BicubicInterpolate(const float* input, const Shape& input_shape, const BicubicInterpolateParams& params,
                          const Shape& output_shape, float* output, Stream stream);

}  // namespace opbridge::cuda
