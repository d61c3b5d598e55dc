// Soft-NMS CPU kernel.
//
// The algorithm and its float32 arithmetic are mmcv's softnms_cpu (mmcv/ops/csrc/pytorch/cpu/
// nms.cpp), which is what mmcv.ops.soft_nms computes (but for the gaussian weight's exp, correctly
// rounded here where glibc's expf is within 0.502 ulp: kernels/shared/soft_nms_steps.h):
//   for i = 0, 1, ...: move the highest remaining score (first one on ties) to position i and
//   emit it; decay the score of every later box by a weight of its IoU with box i; drop a box
//   whose score falls below min_score by moving the last remaining box into its place.
// Each step here is two passes over the remaining boxes, with exactly mmcv's results:
//   1. the decay of every later box (independent of each other, so the loop vectorizes; in mmcv
//      too every box in (i, n) is decayed exactly once, the moved-in ones included);
//   2. the drop-and-move pass in mmcv's order, which also finds the next pick: positions are
//      final once the pass has gone by them, so "first maximum" is tracked as it goes.
#include "kernels/cpu/soft_nms.h"

#include <utility>

#include "kernels/shared/soft_nms_steps.h"

namespace opbridge::cpu {
namespace {

struct Boxes : shared::SoftNmsBoxes<int64_t> {
  float* iou;

  void Swap(int64_t a, int64_t b) {
    std::swap(x1[a], x1[b]);
    std::swap(y1[a], y1[b]);
    std::swap(x2[a], x2[b]);
    std::swap(y2[a], y2[b]);
    std::swap(score[a], score[b]);
    std::swap(area[a], area[b]);
    std::swap(index[a], index[b]);
  }
};

// IoU of box i with every box in [begin, end), into b.iou (kernels/shared/soft_nms_steps.h, which
// the CUDA kernel runs too).
void Overlaps(const Boxes& b, int64_t i, int64_t begin, int64_t end, float offset) {
  const float bx1 = b.x1[i], by1 = b.y1[i], bx2 = b.x2[i], by2 = b.y2[i], barea = b.area[i];
  for (int64_t k = begin; k < end; ++k) {
    b.iou[k] = shared::SoftNmsIou(bx1, by1, bx2, by2, barea, b.x1[k], b.y1[k], b.x2[k], b.y2[k], b.area[k], offset);
  }
}

// One loop per method, so that the naive and linear ones vectorize.
void Decay(const Boxes& b, int64_t begin, int64_t end, const SoftNmsParams& p) {
  float* score = b.score;
  const float* iou = b.iou;
  const float threshold = p.iou_threshold;
  if (p.method == SoftNmsMethod::kNaive) {
    for (int64_t k = begin; k < end; ++k) score[k] = shared::NaiveDecay(score[k], iou[k], threshold);
  } else if (p.method == SoftNmsMethod::kLinear) {
    for (int64_t k = begin; k < end; ++k) score[k] = shared::LinearDecay(score[k], iou[k], threshold);
  } else {
    for (int64_t k = begin; k < end; ++k) score[k] = shared::GaussianDecay(score[k], iou[k], p.sigma);
  }
}

}  // namespace

void SoftNms(const SoftNmsParams& p, const float* boxes, const float* scores, int64_t num_boxes,
             void* scratch, float* dets, int64_t* inds, int64_t* num_kept) {
  // Structure-of-arrays copies, permuted in place as boxes are picked and dropped.
  const int64_t count = num_boxes;
  Boxes b;
  b.index = static_cast<int64_t*>(scratch);
  b.x1 = reinterpret_cast<float*>(b.index + count);
  b.y1 = b.x1 + count;
  b.x2 = b.y1 + count;
  b.y2 = b.x2 + count;
  b.score = b.y2 + count;
  b.area = b.score + count;
  b.iou = b.area + count;
  const float offset = static_cast<float>(p.offset);
  for (int64_t k = 0; k < count; ++k) b.Load(k, boxes, scores, offset);

  // The first pick: the first maximum of all scores. Like mmcv, the scan keeps the current best
  // unless a later score compares greater, so a NaN is only picked when it stands first.
  int64_t best = 0;
  for (int64_t k = 1; k < count; ++k) {
    if (b.score[best] < b.score[k]) best = k;
  }

  int64_t n = count;
  int64_t i = 0;
  for (; i < n; ++i) {
    b.Swap(i, best);
    dets[5 * i + 0] = b.x1[i];
    dets[5 * i + 1] = b.y1[i];
    dets[5 * i + 2] = b.x2[i];
    dets[5 * i + 3] = b.y2[i];
    dets[5 * i + 4] = b.score[i];
    inds[i] = b.index[i];

    // 1. Decay every later box by its IoU with box i.
    Overlaps(b, i, i + 1, n, offset);
    Decay(b, i + 1, n, p);

    // 2. Drop boxes below min_score, moving the last box into the hole and examining it next;
    // meanwhile find the first maximum of the positions that stay, the next pick.
    best = i + 1;
    float best_score = 0.0f;
    for (int64_t k = i + 1; k < n;) {
      if (b.score[k] < p.min_score) {
        b.Move(k, n - 1);
        --n;
        continue;
      }
      if (k == i + 1) {
        best_score = b.score[k];
      } else if (best_score < b.score[k]) {
        best_score = b.score[k];
        best = k;
      }
      ++k;
    }
  }
  *num_kept = i;
}

}  // namespace opbridge::cpu
