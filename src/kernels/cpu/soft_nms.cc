// Soft-NMS CPU kernel.
//
// The algorithm and its float32 arithmetic are mmcv's softnms_cpu (mmcv/ops/csrc/pytorch/cpu/
// nms.cpp), which is what mmcv.ops.soft_nms computes:
//   for i = 0, 1, ...: move the highest remaining score (first one on ties) to position i and
//   emit it; decay the score of every later box by a weight of its IoU with box i; drop a box
//   whose score falls below min_score by moving the last remaining box into its place.
// Here the decay is done in two passes, first all weights (independent, so they vectorize),
// then the drop-and-move pass in mmcv's order, which gives exactly mmcv's results: in mmcv
// every box in (i, n) is also decayed exactly once, and the moved-in box is examined next.
#include "kernels/cpu/soft_nms.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

namespace opbridge::cpu {

void SoftNms(const SoftNmsParams& p, const float* boxes, const float* scores, int64_t num_boxes,
             float* dets, int64_t* inds, int64_t* num_kept) {
  // Structure-of-arrays copies, permuted in place as boxes are picked and dropped.
  const size_t count = static_cast<size_t>(num_boxes);
  std::vector<float> x1(count), y1(count), x2(count), y2(count), sc(count), areas(count);
  std::vector<int64_t> index(count);
  const float offset = static_cast<float>(p.offset);
  for (size_t k = 0; k < count; ++k) {
    x1[k] = boxes[4 * k + 0];
    y1[k] = boxes[4 * k + 1];
    x2[k] = boxes[4 * k + 2];
    y2[k] = boxes[4 * k + 3];
    sc[k] = scores[k];
    areas[k] = (x2[k] - x1[k] + offset) * (y2[k] - y1[k] + offset);
    index[k] = static_cast<int64_t>(k);
  }

  auto swap_boxes = [&](int64_t a, int64_t b) {
    std::swap(x1[a], x1[b]);
    std::swap(y1[a], y1[b]);
    std::swap(x2[a], x2[b]);
    std::swap(y2[a], y2[b]);
    std::swap(sc[a], sc[b]);
    std::swap(areas[a], areas[b]);
    std::swap(index[a], index[b]);
  };
  auto move_box = [&](int64_t to, int64_t from) {
    x1[to] = x1[from];
    y1[to] = y1[from];
    x2[to] = x2[from];
    y2[to] = y2[from];
    sc[to] = sc[from];
    areas[to] = areas[from];
    index[to] = index[from];
  };

  int64_t n = num_boxes;
  int64_t i = 0;
  for (; i < n; ++i) {
    // Pick: first position holding the maximum of sc[i..n). Like mmcv, a NaN at position i
    // stays picked (nothing compares greater), and NaNs further on are never picked over it.
    int64_t best = i;
    float best_score = sc[i];
    for (int64_t k = i + 1; k < n; ++k) {
      if (best_score < sc[k]) {
        best_score = sc[k];
        best = k;
      }
    }
    swap_boxes(i, best);
    dets[5 * i + 0] = x1[i];
    dets[5 * i + 1] = y1[i];
    dets[5 * i + 2] = x2[i];
    dets[5 * i + 3] = y2[i];
    dets[5 * i + 4] = sc[i];
    inds[i] = index[i];

    // Decay every later box by its IoU with box i.
    const float bx1 = x1[i], by1 = y1[i], bx2 = x2[i], by2 = y2[i], barea = areas[i];
    for (int64_t k = i + 1; k < n; ++k) {
      const float w = std::max(0.0f, std::min(bx2, x2[k]) - std::max(bx1, x1[k]) + offset);
      const float h = std::max(0.0f, std::min(by2, y2[k]) - std::max(by1, y1[k]) + offset);
      const float inter = w * h;
      const float iou = inter / (barea + areas[k] - inter);
      float weight = 1.0f;
      if (p.method == SoftNmsMethod::kNaive) {
        if (iou >= p.iou_threshold) weight = 0.0f;
      } else if (p.method == SoftNmsMethod::kLinear) {
        if (iou >= p.iou_threshold) weight = 1.0f - iou;
      } else {
        weight = std::exp(-(iou * iou) / p.sigma);
      }
      sc[k] *= weight;
    }
    // Drop boxes below min_score, moving the last box into the hole and examining it next.
    for (int64_t k = i + 1; k < n;) {
      if (sc[k] < p.min_score) {
        move_box(k, n - 1);
        --n;
      } else {
        ++k;
      }
    }
  }
  *num_kept = i;
}

}  // namespace opbridge::cpu
