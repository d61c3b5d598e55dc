// Grid sampler CPU kernel (float32, 4-D NCHW and 5-D NCDHW input). Framework-free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/grid_sample.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// Bytes of scratch memory GridSample needs (1.25 MB).
size_t GridSampleScratchBytes();

// input: [batch, channels, in_h, in_w]; grid: [batch, out_h, out_w, 2] holding (x, y) in
// [-1, 1]; output: [batch, channels, out_h, out_w]; scratch: GridSampleScratchBytes() bytes,
// 4-byte aligned. Bilinear sampling that is dense enough also takes, per task, a copy of one
// input plane with a border of zeros ((in_h + 3) x (in_w + 2) floats) from the heap.
Status GridSample(const GridSampleParams& params, const float* input, int64_t batch,
                  int64_t channels, int64_t in_h, int64_t in_w, const float* grid, int64_t out_h,
                  int64_t out_w, float* output, void* scratch, const TaskRunner& runner);

// The volumetric form (F.grid_sample on 5-D input; bilinear is trilinear, nearest; no bicubic):
// input [batch, channels, in_d, in_h, in_w]; grid [batch, out_d, out_h, out_w, 3] holding (x, y, z);
// output [batch, channels, out_d, out_h, out_w]; scratch: GridSampleScratchBytes() bytes.
Status GridSample3d(const GridSampleParams& params, const float* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const float* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    float* output, void* scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
