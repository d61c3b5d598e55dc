// The Problem types of the NMS-family drivers (nms_drivers.h): one problem's boxes in processing
// order, carved from scratch memory, with the op's suppression rule. Shared by the ops whose
// geometry coincides (axis-aligned boxes with torchvision's IoU for nms and trt_batched_nms, or
// with mmdeploy's NMSMatch IoU for nms_match; the rotated IoU for nms_rotated and
// trt_batched_nms's rotated identities).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/half_storage.h"
#include "core/scratch.h"
#include "kernels/shared/box_iou_rotated.h"
#include "kernels/shared/nms_rotated_rules.h"
#include "kernels/cpu/greedy_nms.h"
#include "kernels/cpu/nms.h"
#include "kernels/cpu/nms_match.h"

namespace opbridge::cpu {

using shared::MakeRotatedBox;
using shared::RotatedBox;
using shared::RotatedBoxBounds;
using shared::RotatedIou;

// One problem's boxes in processing order, as the rule and the greedy engine read them.
struct AxisAlignedProblem {
  float offset;
  float threshold;
  // false: torchvision's IoU > threshold (TorchvisionIouRule); true: mmdeploy NMSMatch's IoU >=
  // threshold, with its 1e-10 added to the union in double (MmdeployMatchIouRule; offset 0).
  bool match_iou = false;
  int64_t box_stride = 4;  // floats from one box to the next in the boxes Gather reads
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
  // with every box under either rule (its overlap is 0, or its area is infinite or NaN), so it
  // is never suppressed and suppresses nothing, except under the match rule's IoU >= 0, where
  // an IoU of +0 or -0 suppresses (see Suppress).
  template <class T>
  void Gather(const T* boxes, const int32_t* positions, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      float b[4];
      shared::LoadRun(boxes + box_stride * static_cast<int64_t>(positions[k]), 4, b);
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

  // Greedy suppression; first_suppressor (or null) gets, per candidate, the earliest kept
  // candidate that suppressed it (-1: kept).
  void Suppress(int64_t count, int64_t max_kept, int32_t* first_suppressor = nullptr) {
    GreedyProblem problem;
    problem.count = count;
    problem.extents = extents;
    problem.active = active;
    problem.max_kept = max_kept;
    // Under the match rule's IoU >= 0, the +0 or -0 IoU of disjoint and degenerate boxes
    // suppresses, as in mmdeploy: every pair is given to the rule, which decides exactly.
    problem.test_every_pair = match_iou && !(threshold > 0.0f);
    if (!problem.test_every_pair) {
      // For boxes with sides (w1, h1) and (w2, h2), the overlap is at most min(w1, w2) wide and
      // the union at least max(w1, w2) times the other box's height, so IoU <= min(w1, w2) /
      // max(w1, w2), and likewise for heights and for the longer sides, up to a few float
      // roundings (below 1e-6 relative); the ratios are taken a little under the threshold
      // (1e-5 and 1e-3 of it) to absorb them. They hold for the match rule too: its union gets
      // + 1e-10 in double, and for two active boxes U >= 0 and D = fl64(U + 1e-10) >= U, so
      // inter / D <= inter / U (where U = 0, inter is 0 too and the IoU is 0), and rounding that
      // to float stays within a float ulp (6e-8 relative) of torchvision's fl32(inter / U).
      problem.sizes = longer_side;
      problem.min_size_ratio = threshold * (1.0f - 1e-5f);
      problem.min_overlap_fraction = threshold * (1.0f - 1e-3f);
    }
    if (match_iou) {
      GreedySuppress(problem, MmdeployMatchIouRule{x1, y1, x2, y2, area, threshold}, kept, first_suppressor, greedy);
    } else {
      GreedySuppress(problem, TorchvisionIouRule{x1, y1, x2, y2, area, offset, threshold}, kept, first_suppressor,
                     greedy);
    }
  }
};

// Degenerate boxes. mmcv's single_box_iou_rotated returns 0 when either area (w * h) is below
// 1e-14; mmdeploy's copy has no such guard and computes garbage for zero-area boxes (a
// zero-width box acts as a band across the other). opbridge gives every box with a non-finite
// value, or an area below the rule's limit (1e-14 for mmcv, 0 for mmdeploy: an area > 0 means
// w and h have the same sign, and a box with both negative is the box of |w| x |h|), an IoU of 0
// with every box: it is kept and suppresses nothing (unless the rule is IoU >= 0, where an IoU
// of 0 suppresses too, as in mmcv).
struct RotatedIouRule {
  const RotatedBox* boxes;
  const uint8_t* active;
  float threshold;
  bool inclusive;  // IoU >= threshold (mmcv) rather than > (mmdeploy)
  bool operator()(int32_t i, int32_t j) const {
    // The rule the CUDA kernels run too (kernels/shared/nms_rotated_rules.h), kept box first.
    const shared::RotatedNmsRule rule{threshold, inclusive};
    return rule(shared::RotatedNmsBox{boxes[i], active[i] != 0}, shared::RotatedNmsBox{boxes[j], active[j] != 0});
  }
};

struct RotatedProblem {
  float threshold;
  bool inclusive;
  double min_area;  // smallest area of an active box: >= this (mmcv's 1e-14, a double) or > 0 (min_area 0)
  bool clockwise;
  int64_t box_stride = 5;  // floats from one box to the next in the boxes Gather reads
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

  template <class T>
  void Gather(const T* all_boxes, const int32_t* positions, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      // How a box enters, as the CUDA kernels have it (kernels/shared/nms_rotated_rules.h).
      float b[5];
      shared::LoadRun(all_boxes + box_stride * static_cast<int64_t>(positions[k]), 5, b);
      const shared::RotatedNmsBox box = shared::MakeRotatedNmsBox(b, clockwise, min_area);
      boxes[k] = box.box;
      active[k] = box.active;
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

}  // namespace opbridge::cpu
