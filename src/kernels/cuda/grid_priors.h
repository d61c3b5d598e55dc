// Grid priors CUDA kernel (mmdet's single_level_grid_priors, float32). Framework-free.
#pragma once

#include <stdint.h>

#include "core/grid_priors.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// base_anchors [anchors, 4] and output [height * width * anchors, 4] in device memory:
// cpu::GridPriors's values bit for bit (kernels/shared/grid_priors.h), one thread per anchor row,
// which stores its 16 bytes at once (consecutive threads, consecutive rows: coalesced). The op only
// writes memory: on an H100 (about 3 TB/s) the bench's RPN P2 case (201,600 rows, 3.2 MB) should
// take about 1 us of writes, under the launch's few microseconds; its longest chain is one row.
Status GridPriors(const float* base_anchors, int64_t anchors, int64_t height, int64_t width,
                  const GridPriorsParams& params, float* output, Stream stream);

}  // namespace opbridge::cuda
