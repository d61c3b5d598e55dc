// Rotated NMS CPU kernels (boxes (cx, cy, w, h, theta in radians) and scores in float32, float16 or
// bfloat16: T, read as the floats they hold, so that a half call keeps the boxes the float32 kernel
// keeps on those values). Framework-free.
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
template <class T>
Status NmsRotated(const NmsRotatedParams& params, const T* boxes, const T* scores, const int64_t* categories,
                  int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner);

// boxes [batch, n, 5], scores [batch, classes, n]. Per (b, c) problem, the kept box indices go to
// kept_boxes[(b * classes + c) * n ...] and their count to kept_counts[b * classes + c]; rows
// with WriteSelectedRows(..., cap = n).
template <class T>
Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const T* boxes, const T* scores,
                            int64_t batch, int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                            ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
