// Keypoint R-CNN heatmap decoding CUDA kernel (float32). Framework-free.
#pragma once

#include <stdint.h>

#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// maps [r, k, map_h, map_w] and rois [r, 4] in device memory; xy [r, k, 3] and scores [r, k]:
// cpu::HeatmapsToKeypoints's values bit for bit (kernels/shared/heatmap_keypoint.h), one thread
// block per (roi, keypoint). The rois are read on the device only: a roi whose resized map would
// exceed kKeypointsMaxMapSamples gives NaN x, y and score where the CPU op reports an error.
Status HeatmapsToKeypoints(const float* maps, int64_t r, int64_t k, int64_t map_h, int64_t map_w, const float* rois,
                           float* xy, float* scores, Stream stream);

}  // namespace opbridge::cuda
