// NMSMatch CPU kernel (boxes (x1, y1, x2, y2) and scores in float32, float16 or bfloat16: T, read as
// the floats they hold, so that a half call reports the float32 kernel's rows on those values).
// Framework-free.
//
//   NmsMatch  mmdeploy's NMSMatch: per batch and class, greedy suppression over every box
//             (IoU >= threshold, mmdeploy's IoU with 1e-10 in the union), reporting which kept
//             box suppressed which.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/nms_match.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/nms_drivers.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::cpu {

// mmdeploy's nms_match_iou(box_i, box_j) >= threshold for candidates i (kept) and j of one
// problem, from structure-of-arrays copies in processing order: shared::MmdeployMatchSuppresses
// (kernels/shared/nms_rules.h), the rule the CUDA kernel runs too.
struct MmdeployMatchIouRule {
  const float *x1, *y1, *x2, *y2, *area;
  float threshold;
  bool operator()(int32_t i, int32_t j) const {
    return shared::MmdeployMatchSuppresses(shared::NmsBox{x1[i], y1[i], x2[i], y2[i], area[i]},
                                           shared::NmsBox{x1[j], y1[j], x2[j], y2[j], area[j]}, threshold);
  }
};

// boxes [batch, n, 4], scores [batch, classes, n]. Per (b, c) problem, the (kept box, suppressed
// box) pairs of the kept boxes scoring > score_threshold go to
// pairs[2 * ((b * classes + c) * n + r) ...], r < pair_counts[b * classes + c] (room for
// batch * classes * n pairs), ordered by kept box in descending score order (ties by index, NaN
// first), then suppressed box likewise; rows with WriteMatchRows (nms_drivers.h).
template <class T>
Status NmsMatch(const NmsMatchParams& params, const T* boxes, const T* scores, int64_t batch, int64_t classes,
                int64_t n, int32_t* pairs, int64_t* pair_counts, ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
