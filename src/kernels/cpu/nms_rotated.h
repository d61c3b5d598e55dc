// Rotated NMS CPU kernels (float32 boxes (cx, cy, w, h, theta in radians)). Framework-free.
//
//   NmsRotated            mmcv.ops.nms_rotated's numerics (IoU >= threshold, mmcv's rotated IoU
//                         with its guard for degenerate boxes) on one list of boxes, optionally
//                         split into categories that do not suppress each other.
//   MulticlassNmsRotated  mmdeploy's NMSRotated: per batch and class, the boxes scoring above a
//                         threshold, IoU > threshold.
#pragma once

#include <cstdint>

#include "core/nms_rotated.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/nms_drivers.h"

namespace opbridge::cpu {

// boxes [n, 5], scores [n], categories [n] or nullptr. Writes the kept indices to keep (room for
// n) in descending score order (ties by index) and their count to *num_kept.
Status NmsRotated(const NmsRotatedParams& params, const float* boxes, const float* scores, const int64_t* categories,
                  int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner);

// boxes [batch, n, 5], scores [batch, classes, n]. Per (b, c) problem, the kept box indices go to
// kept_boxes[(b * classes + c) * n ...] and their count to kept_counts[b * classes + c]; rows
// with WriteSelectedRows(..., cap = n).
Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const float* boxes, const float* scores,
                            int64_t batch, int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                            ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
