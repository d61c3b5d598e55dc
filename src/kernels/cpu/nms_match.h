// NMSMatch CPU kernel (float32 boxes (x1, y1, x2, y2)). Framework-free.
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

namespace opbridge::cpu {

// mmdeploy's nms_match_iou(box_i, box_j) >= threshold for candidates i (kept) and j of one
// problem, from structure-of-arrays copies in processing order, operation for operation: the
// intersection, the areas (unclamped) and the union in float32; mmdeploy's `auto eps = 1e-10` is
// a double, so the union plus eps and the division are double, and the quotient is rounded to
// float when nms_match_iou returns it. Operand orders are mmdeploy's (std::max(0, NaN) is 0).
struct MmdeployMatchIouRule {
  const float *x1, *y1, *x2, *y2, *area;
  float threshold;
  bool operator()(int32_t i, int32_t j) const {
    const float inter_x1 = std::max(x1[i], x1[j]);
    const float inter_y1 = std::max(y1[i], y1[j]);
    const float inter_x2 = std::min(x2[i], x2[j]);
    const float inter_y2 = std::min(y2[i], y2[j]);
    const float w = std::max(0.0f, inter_x2 - inter_x1);
    const float h = std::max(0.0f, inter_y2 - inter_y1);
    const float inter = w * h;
    const float union_area = area[i] + area[j] - inter;
    const float iou = static_cast<float>(inter / (static_cast<double>(union_area) + 1e-10));
    return iou >= threshold;
  }
};

// boxes [batch, n, 4], scores [batch, classes, n]. Per (b, c) problem, the (kept box, suppressed
// box) pairs of the kept boxes scoring > score_threshold go to
// pairs[2 * ((b * classes + c) * n + r) ...], r < pair_counts[b * classes + c] (room for
// batch * classes * n pairs), ordered by kept box in descending score order (ties by index, NaN
// first), then suppressed box likewise; rows with WriteMatchRows (nms_drivers.h).
Status NmsMatch(const NmsMatchParams& params, const float* boxes, const float* scores, int64_t batch,
                int64_t classes, int64_t n, int32_t* pairs, int64_t* pair_counts, ScratchAllocator& scratch,
                const TaskRunner& runner);

}  // namespace opbridge::cpu
