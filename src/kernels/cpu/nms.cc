// Axis-aligned NMS CPU kernels (see nms.h): torchvision's IoU rule in the shared drivers
// (nms_drivers.h) and greedy engine (greedy_nms.h).
#include "kernels/cpu/nms.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/greedy_nms.h"
#include "kernels/cpu/nms_drivers.h"

namespace opbridge::cpu {
namespace {

// One problem's boxes in processing order, as the rule and the greedy engine read them.
struct AxisAlignedProblem {
  float offset;
  float threshold;
  float *x1, *y1, *x2, *y2, *area;
  float* longer_side;  // max(width, height): IoU <= the ratio of two boxes' longer sides
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

  // Copies boxes[positions[k]] for k < count. A candidate is active when its width and height
  // (with the offset) are > 0 and its area is finite: any other box has an IoU of 0 or NaN
  // with every box under this rule (its overlap is 0, or its area is infinite or NaN), so it
  // is never suppressed and suppresses nothing.
  void Gather(const float* boxes, const int32_t* positions, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      const float* b = boxes + 4 * static_cast<int64_t>(positions[k]);
      x1[k] = b[0];
      y1[k] = b[1];
      x2[k] = b[2];
      y2[k] = b[3];
      const float w = b[2] - b[0] + offset, h = b[3] - b[1] + offset;
      area[k] = w * h;
      longer_side[k] = std::max(w, h);
      active[k] = w > 0.0f && h > 0.0f && area[k] < std::numeric_limits<float>::infinity();
      if (active[k]) {
        // Two boxes overlap (inter > 0) only where [x1, x2 + offset] x [y1, y2 + offset] meet:
        // with offset 0, min(x2) - max(x1) > 0 is an exact comparison of x2 and x1; with offset
        // 1, the rounded difference exceeds -1 only if x2 + 1 > x1, and x1 is representable.
        float* e = extents + 4 * k;
        e[0] = b[0];
        e[1] = b[1];
        e[2] = b[2] + offset;
        e[3] = b[3] + offset;
      }
    }
  }

  void Suppress(int64_t count, int64_t max_kept) {
    GreedyProblem problem;
    problem.count = count;
    problem.extents = extents;
    problem.active = active;
    problem.max_kept = max_kept;
    // For boxes with sides (w1, h1) and (w2, h2), the overlap is at most min(w1, w2) wide and
    // the union at least max(w1, w2) times the other box's height, so IoU <= min(w1, w2) /
    // max(w1, w2), and likewise for heights and for the longer sides. The ratio is taken a
    // little under the threshold to absorb rounding in the IoU.
    problem.sizes = longer_side;
    problem.min_size_ratio = threshold * (1.0f - 1e-5f);
    problem.min_overlap_fraction = threshold * (1.0f - 1e-3f);
    const TorchvisionIouRule rule{x1, y1, x2, y2, area, offset, threshold};
    GreedySuppress(problem, rule, kept, nullptr, greedy);
  }
};

}  // namespace

Status Nms(const NmsParams& params, const float* boxes, const float* scores, const int64_t* categories,
           int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner) {
  AxisAlignedProblem prototype{};
  prototype.offset = static_cast<float>(params.offset);
  prototype.threshold = params.iou_threshold;
  return KeepPerCategory(prototype, boxes, scores, categories, n, keep, num_kept, scratch, runner);
}

int64_t MulticlassNmsCapacity(const MulticlassNmsParams& params, int64_t n) {
  return params.max_output_boxes_per_class < 0 ? n : std::min(n, params.max_output_boxes_per_class);
}

Status MulticlassNms(const MulticlassNmsParams& params, const float* boxes, const float* scores, int64_t batch,
                     int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                     ScratchAllocator& scratch, const TaskRunner& runner) {
  AxisAlignedProblem prototype{};
  prototype.offset = 0.0f;
  prototype.threshold = params.iou_threshold;
  return KeepPerBatchAndClass(prototype, boxes, 4, scores, batch, classes, n, params.score_threshold,
                              MulticlassNmsCapacity(params, n), kept_boxes, kept_counts, scratch, runner);
}

}  // namespace opbridge::cpu
