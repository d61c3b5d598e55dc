// NMSMatch CPU kernel (see nms_match.h): mmdeploy's IoU rule in the shared drivers
// (nms_drivers.h, MatchPerBatchAndClass) and greedy engine (greedy_nms.h).
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
// included: every pair is then given to the rule (test_every_pair), which decides exactly.
#include "kernels/cpu/nms_match.h"

#include <limits>

#include "kernels/cpu/greedy_nms.h"

namespace opbridge::cpu {
namespace {

// One problem's boxes in processing order, as the rule and the greedy engine read them.
struct MatchProblem {
  float threshold;
  float *x1, *y1, *x2, *y2, *area;
  float* longer_side;  // max(width, height)
  float* extents;      // [count][4]
  uint8_t* active;
  uint8_t* kept;
  void* greedy;  // GreedyScratchBytes

  static size_t Bytes(int64_t count) {
    return ArenaBytes<float>(count) * 6 + ArenaBytes<float>(4 * count) + ArenaBytes<uint8_t>(count) * 2 +
           ArenaBytes<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }
  void Carve(Arena* arena, int64_t count) {
    x1 = arena->Take<float>(count);
    y1 = arena->Take<float>(count);
    x2 = arena->Take<float>(count);
    y2 = arena->Take<float>(count);
    area = arena->Take<float>(count);
    longer_side = arena->Take<float>(count);
    extents = arena->Take<float>(4 * count);
    active = arena->Take<uint8_t>(count);
    kept = arena->Take<uint8_t>(count);
    greedy = arena->Take<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }

  // Copies boxes[positions[k]] for k < count. Active (able to reach a threshold > 0, see the top
  // of this file): x2 > x1, y2 > y1 and a finite area, which also makes every coordinate finite.
  // Two active boxes whose rectangles [x1, x2] x [y1, y2] do not meet have an intersection of 0
  // and a positive union, so an IoU of +0: the rectangles are the grid's extents.
  void Gather(const float* boxes, const int32_t* positions, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      const float* b = boxes + 4 * static_cast<int64_t>(positions[k]);
      x1[k] = b[0];
      y1[k] = b[1];
      x2[k] = b[2];
      y2[k] = b[3];
      const float w = b[2] - b[0], h = b[3] - b[1];
      area[k] = w * h;
      longer_side[k] = std::max(w, h);
      active[k] = b[2] > b[0] && b[3] > b[1] && area[k] < std::numeric_limits<float>::infinity();
      float* e = extents + 4 * k;
      e[0] = b[0];
      e[1] = b[1];
      e[2] = b[2];
      e[3] = b[3];
    }
  }

  void Suppress(int64_t count, int64_t max_kept, int32_t* first_suppressor) {
    GreedyProblem problem;
    problem.count = count;
    problem.extents = extents;
    problem.active = active;
    problem.max_kept = max_kept;
    problem.test_every_pair = !(threshold > 0.0f);
    if (threshold > 0.0f) {
      // The size and overlap pruning of axis-aligned NMS (nms.cc) holds for mmdeploy's IoU too.
      // Its union gets + 1e-10 in double: for two active boxes U >= 0 and D = fl64(U + 1e-10)
      // >= U, so inter / D <= inter / U (where U = 0, inter is 0 too and the IoU is 0), and
      // rounding that to double and then to float stays within a float ulp (6e-8 relative) of
      // torchvision's fl32(inter / U), the value the bounds are for.
      // The bounds themselves: with the float sides w, h of the boxes, the intersection's sides
      // (the same floats the engine's overlap test computes) are at most min(w_i, w_j) and
      // min(h_i, h_j) (rounding is monotonic), and the union is at least either area, so
      // IoU <= overlap_x / max(w_i, w_j), likewise for y, and <= the ratio of the longer sides,
      // up to a few float roundings (below 1e-6 relative). The margins below (1e-5 and 1e-3 of
      // the threshold) cover both.
      problem.sizes = longer_side;
      problem.min_size_ratio = threshold * (1.0f - 1e-5f);
      problem.min_overlap_fraction = threshold * (1.0f - 1e-3f);
    }
    const MmdeployMatchIouRule rule{x1, y1, x2, y2, area, threshold};
    GreedySuppress(problem, rule, kept, first_suppressor, greedy);
  }
};

}  // namespace

Status NmsMatch(const NmsMatchParams& params, const float* boxes, const float* scores, int64_t batch,
                int64_t classes, int64_t n, int32_t* pairs, int64_t* pair_counts, ScratchAllocator& scratch,
                const TaskRunner& runner) {
  MatchProblem prototype{};
  prototype.threshold = params.iou_threshold;
  return MatchPerBatchAndClass(prototype, boxes, 4, scores, batch, classes, n, params.score_threshold, pairs,
                               pair_counts, scratch, runner);
}

}  // namespace opbridge::cpu
