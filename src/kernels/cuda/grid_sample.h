// Grid sampler CUDA kernels (4-D: ATen's grid_sampler_2d; 5-D: grid_sampler_3d; float32, float16 or
// bfloat16 storage with float32 arithmetic). Framework-free.
#pragma once

#include <stdint.h>

#include "core/grid_sample.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"
#include "core/half_storage.h"

namespace opbridge::cuda {

// input [batch, channels, in_h, in_w], grid [batch, out_h, out_w, 2], output [batch, channels,
// out_h, out_w], in device memory. The same numerics as cpu::GridSample, bit for bit: every value
// is computed from the same taps with the same float operations (kernels/shared/grid_sample_taps.h).
// T is the storage type of input, grid and output: float, shared::Float16 or shared::BFloat16.
template <class T>
Status GridSample(const GridSampleParams& params, const T* input, int64_t batch, int64_t channels, int64_t in_h,
                  int64_t in_w, const T* grid, int64_t out_h, int64_t out_w, T* output, Stream stream);

// The volumetric form: input [batch, channels, in_d, in_h, in_w], grid [batch, out_d, out_h, out_w,
// 3], output [batch, channels, out_d, out_h, out_w]: cpu::GridSample3d's values bit for bit
// (kernels/shared/grid_sample_3d.h). Bilinear (trilinear) and nearest.
template <class T>
Status GridSample3d(const GridSampleParams& params, const T* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const T* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    T* output, Stream stream);

}  // namespace opbridge::cuda
