// Axis-aligned NMS CPU kernels. Framework-free. Boxes and scores are T: float, or half storage
// (shared::Float16, BFloat16, core/half_storage.h), each value read as the float it is, so that the
// kept boxes are the float32 kernel's on the half values.
//
//   Nms            torchvision.ops.nms and batched_nms, mmcv::NonMaxSuppression: one list of
//                  boxes, optionally split into categories that do not suppress each other.
//   MulticlassNms  the multi-class layout of ONNX NonMaxSuppression: per batch and class, the
//                  boxes scoring above a threshold, at most a given number kept.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/nms.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/nms_drivers.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::cpu {

// The IoU rule of torchvision's and mmcv's CPU kernels (shared::TorchvisionSuppresses, which the
// CUDA kernels use too), for candidates i (kept) and j of one problem, from structure-of-arrays
// copies in processing order.
struct TorchvisionIouRule {
  const float *x1, *y1, *x2, *y2, *area;
  float offset;
  float threshold;
  bool operator()(int32_t i, int32_t j) const {
    return shared::TorchvisionSuppresses({x1[i], y1[i], x2[i], y2[i], area[i]}, {x1[j], y1[j], x2[j], y2[j], area[j]},
                                         offset, threshold);
  }
};

// boxes [n, 4] (x1, y1, x2, y2), scores [n], categories [n] or nullptr (all one category).
// Writes the indices of the kept boxes to keep (room for n), in descending score order with
// ties by index (torch.sort stable), and their count to *num_kept.
template <class T>
Status Nms(const NmsParams& params, const T* boxes, const T* scores, const int64_t* categories,
           int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner);

// The multi-class layout. boxes [batch, n, 4], scores [batch, classes, n]. Per (b, c) problem,
// writes the kept box indices in descending score order to kept_boxes[(b * classes + c) * cap ...]
// and their count to kept_counts[b * classes + c], where cap = MulticlassNmsCapacity(params, n).
int64_t MulticlassNmsCapacity(const MulticlassNmsParams& params, int64_t n);
template <class T>
Status MulticlassNms(const MulticlassNmsParams& params, const T* boxes, const T* scores, int64_t batch,
                     int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                     ScratchAllocator& scratch, const TaskRunner& runner);

// The rows of the results: WriteSelectedRows in nms_drivers.h.

}  // namespace opbridge::cpu
