// NMSMatch CPU kernel (see nms_match.h): mmdeploy's IoU rule (AxisAlignedProblem with match_iou,
// nms_problems.h) in the shared drivers (nms_drivers.h, MatchPerBatchAndClass) and greedy engine
// (greedy_nms.h).
//
// Why the engine's first_suppressor is mmdeploy's record. mmdeploy visits the boxes in score
// order; a box still standing when visited is kept and marks every later box still standing
// with IoU >= threshold as suppressed, recording it under itself. Every kept box before j tests
// j unless j is already marked, so j is recorded under the first kept box (in processing order)
// whose test passes, and kept boxes after j never test it: that is the earliest kept box that
// suppresses j, which GreedySuppress writes to first_suppressor. The kept sets are the same
// (j is kept exactly when no earlier kept box suppresses it).
//
// Degenerate boxes (mmdeploy's formula, which opbridge computes as it is):
// - A box with x2 <= x1 or y2 <= y1 (zero-width, zero-height or inverted) overlaps nothing: for
//   any other box, min(x2) - max(x1) <= its own x2 - x1 <= 0 (or is NaN), so the intersection's
//   width is 0 and the IoU is 0 / (union + 1e-10): +0 or -0 (an inverted box's area is
//   negative, and the union can be), or NaN (a NaN union, or an infinite height times 0).
// - A box with a NaN coordinate has a NaN area, so its IoU with every box is NaN.
// - A box whose area is infinite (an infinite coordinate, or sides whose product overflows)
//   makes the union infinite or NaN, so its IoU with every box is 0 or NaN.
// None of these reaches a threshold > 0: they are inactive for the engine (kept, suppressing
// nothing), which lets the grid skip them. With threshold 0, +0 and -0 both reach it, so
// (as in mmdeploy) every pair whose IoU is not NaN matches, disjoint or inverted boxes
// included: AxisAlignedProblem then gives every pair to the rule, which decides exactly.
#include "kernels/cpu/nms_match.h"

#include "kernels/cpu/nms_problems.h"

namespace opbridge::cpu {

template <class T>
Status NmsMatch(const NmsMatchParams& params, const T* boxes, const T* scores, int64_t batch, int64_t classes,
                int64_t n, int32_t* pairs, int64_t* pair_counts, ScratchAllocator& scratch, const TaskRunner& runner) {
  AxisAlignedProblem prototype{};
  prototype.offset = 0.0f;
  prototype.threshold = params.iou_threshold;
  prototype.match_iou = true;
  return MatchPerBatchAndClass(prototype, boxes, 4, scores, batch, classes, n, params.score_threshold, pairs,
                               pair_counts, scratch, runner);
}

#define OPBRIDGE_NMS_MATCH(T)                                                                            \
  template Status NmsMatch<T>(const NmsMatchParams&, const T*, const T*, int64_t, int64_t, int64_t, int32_t*, \
                              int64_t*, ScratchAllocator&, const TaskRunner&);
OPBRIDGE_NMS_MATCH(float)
OPBRIDGE_NMS_MATCH(shared::Float16)
OPBRIDGE_NMS_MATCH(shared::BFloat16)
#undef OPBRIDGE_NMS_MATCH

}  // namespace opbridge::cpu
