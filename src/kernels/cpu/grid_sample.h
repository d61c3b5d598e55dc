// Grid sampler CPU kernel (4-D NCHW and 5-D NCDHW input; float32, float16 or bfloat16 storage with
// float32 arithmetic). Framework-free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/grid_sample.h"
#include "core/parallel.h"
#include "core/status.h"
#include "core/half_storage.h"

namespace opbridge::cpu {

// Bytes of scratch memory GridSample needs (1.25 MB).
size_t GridSampleScratchBytes();

// input: [batch, channels, in_h, in_w]; grid: [batch, out_h, out_w, 2] holding (x, y) in
// [-1, 1]; output: [batch, channels, out_h, out_w]; scratch: GridSampleScratchBytes() bytes,
// 4-byte aligned. Bilinear sampling that is dense enough also takes, per task, a copy of one
// input plane with a border of zeros ((in_h + 3) x (in_w + 2) floats) from the heap.
// T is the storage type of input, grid and output: float, shared::Float16 or shared::BFloat16
// (core/half_storage.h); every value is the float32 kernel's on the stored values, rounded
// once as it is stored.
template <class T>
Status GridSample(const GridSampleParams& params, const T* input, int64_t batch,
                  int64_t channels, int64_t in_h, int64_t in_w, const T* grid, int64_t out_h,
                  int64_t out_w, T* output, void* scratch, const TaskRunner& runner);

// The volumetric form (F.grid_sample on 5-D input; bilinear is trilinear, nearest; no bicubic):
// input [batch, channels, in_d, in_h, in_w]; grid [batch, out_d, out_h, out_w, 3] holding (x, y, z);
// output [batch, channels, out_d, out_h, out_w]; scratch: GridSampleScratchBytes() bytes.
template <class T>
Status GridSample3d(const GridSampleParams& params, const T* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const T* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    T* output, void* scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
