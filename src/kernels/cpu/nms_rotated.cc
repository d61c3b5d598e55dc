// Rotated NMS CPU kernels (see nms_rotated.h): the rotated IoU (box_iou_rotated.h) in the shared
// drivers (nms_drivers.h) and greedy engine (greedy_nms.h).
//
// Degenerate boxes. mmcv's single_box_iou_rotated returns 0 when either area (w * h) is below
// 1e-14; mmdeploy's copy has no such guard and computes garbage for zero-area boxes (a
// zero-width box acts as a band across the other). opbridge gives every box with a non-finite
// value, or an area below the rule's limit (1e-14 for mmcv, 0 for mmdeploy: an area > 0 means
// w and h have the same sign, and a box with both negative is the box of |w| x |h|), an IoU of 0
// with every box: it is kept and suppresses nothing (unless the rule is IoU >= 0, where an IoU
// of 0 suppresses too, as in mmcv).
#include "kernels/cpu/nms_rotated.h"

#include <cmath>
#include <limits>

#include "kernels/cpu/box_iou_rotated.h"
#include "kernels/cpu/greedy_nms.h"

namespace opbridge::cpu {
namespace {

struct RotatedIouRule {
  const RotatedBox* boxes;
  const uint8_t* active;
  float threshold;
  bool inclusive;  // IoU >= threshold (mmcv) rather than > (mmdeploy)
  bool operator()(int32_t i, int32_t j) const {
    // Kept box first, as mmcv and mmdeploy pass them (the intersection is not symmetric in its
    // last bits).
    const float iou = active[i] && active[j] ? RotatedIou(boxes[i], boxes[j]) : 0.0f;
    return inclusive ? iou >= threshold : iou > threshold;
  }
};

struct RotatedProblem {
  float threshold;
  bool inclusive;
  double min_area;  // smallest area of an active box: >= this (mmcv's 1e-14, a double) or > 0 (min_area 0)
  bool clockwise;
  RotatedBox* boxes;
  float* extents;
  uint8_t* active;
  uint8_t* kept;
  void* greedy;

  static size_t Bytes(int64_t count) {
    return ArenaBytes<RotatedBox>(count) + ArenaBytes<float>(4 * count) + ArenaBytes<uint8_t>(count) * 2 +
           ArenaBytes<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }
  void Carve(Arena* arena, int64_t count) {
    boxes = arena->Take<RotatedBox>(count);
    extents = arena->Take<float>(4 * count);
    active = arena->Take<uint8_t>(count);
    kept = arena->Take<uint8_t>(count);
    greedy = arena->Take<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }

  void Gather(const float* all_boxes, const int32_t* positions, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      float b[5];
      const float* src = all_boxes + 5 * static_cast<int64_t>(positions[k]);
      for (int v = 0; v < 5; ++v) b[v] = src[v];
      if (!clockwise) b[4] = -b[4];  // mmcv's clockwise=False negates theta
      boxes[k] = MakeRotatedBox(b);
      const float area = b[2] * b[3];
      const bool finite = std::isfinite(b[0]) && std::isfinite(b[1]) && std::isfinite(b[2]) && std::isfinite(b[3]) &&
                          std::isfinite(b[4]) && std::isfinite(area);
      active[k] = finite && (min_area > 0.0 ? static_cast<double>(area) >= min_area : area > 0.0f);
      float* e = extents + 4 * k;
      RotatedBoxBounds(boxes[k], e, e + 1, e + 2, e + 3);
    }
  }

  void Suppress(int64_t count, int64_t max_kept) {
    GreedyProblem problem;
    problem.count = count;
    problem.extents = extents;
    problem.active = active;
    problem.max_kept = max_kept;
    // An IoU of 0 suppresses under IoU >= 0: then every pair is tested, as mmcv does.
    problem.test_every_pair = inclusive && threshold <= 0.0f;
    // No size or overlap pruning: mmcv's IoU can exceed the area ratio bound where its crossing
    // test misfires (box_iou_rotated.h), and compatibility means computing what it computes.
    const RotatedIouRule rule{boxes, active, threshold, inclusive};
    GreedySuppress(problem, rule, kept, nullptr, greedy);
  }
};

}  // namespace

Status NmsRotated(const NmsRotatedParams& params, const float* boxes, const float* scores, const int64_t* categories,
                  int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner) {
  RotatedProblem prototype{};
  prototype.threshold = params.iou_threshold;
  prototype.inclusive = true;
  prototype.min_area = 1e-14;
  prototype.clockwise = params.clockwise;
  return KeepPerCategory(prototype, boxes, scores, categories, n, keep, num_kept, scratch, runner);
}

Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const float* boxes, const float* scores,
                            int64_t batch, int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                            ScratchAllocator& scratch, const TaskRunner& runner) {
  RotatedProblem prototype{};
  prototype.threshold = params.iou_threshold;
  prototype.inclusive = false;
  prototype.min_area = 0.0;
  prototype.clockwise = true;
  return KeepPerBatchAndClass(prototype, boxes, 5, scores, batch, classes, n, params.score_threshold, n, kept_boxes,
                              kept_counts, scratch, runner);
}

}  // namespace opbridge::cpu
