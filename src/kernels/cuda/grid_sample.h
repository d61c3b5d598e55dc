// Grid sampler CUDA kernel (float32, 4-D: ATen's grid_sampler_2d). Framework-free.
#pragma once

#include <stdint.h>

#include "core/grid_sample.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// input [batch, channels, in_h, in_w], grid [batch, out_h, out_w, 2], output [batch, channels,
// out_h, out_w], in device memory. The same numerics as cpu::GridSample, bit for bit: every value
// is computed from the same taps with the same float operations (kernels/shared/grid_sample_taps.h).
Status GridSample(const GridSampleParams& params, const float* input, int64_t batch, int64_t channels, int64_t in_h,
                  int64_t in_w, const float* grid, int64_t out_h, int64_t out_w, float* output, Stream stream);

}  // namespace opbridge::cuda
