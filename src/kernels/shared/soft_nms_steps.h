// Soft-NMS, per box and per step: the overlap, the decays, the next pick and where mmcv's
// drop-and-move pass puts a box. The CPU kernel (kernels/cpu/soft_nms.cc) runs the per-box math,
// the CUDA kernel (kernels/cuda/soft_nms.cu) all of it, so both give the same bits.
//
// mmcv's step i (softnms_cpu): emit the box at position i; decay every box at positions (i, end)
// by its overlap with it; then one pass from i + 1 drops each box whose score is below min_score
// by moving the box at end - 1 into its place (examined next), and the next pick is the first
// maximum of the positions that stay. The GPU does the pass in closed form (SoftNmsMoverRank).
#pragma once

#include <stdint.h>
#include <string.h>

#include "core/host_device.h"
#include "core/soft_nms.h"

namespace opbridge::shared {

// (x2 - x1 + offset) (y2 - y1 + offset), mmcv's order.
OPBRIDGE_HD inline float SoftNmsArea(float x1, float y1, float x2, float y2, float offset) {
  return (x2 - x1 + offset) * (y2 - y1 + offset);
}

// The boxes by position, as structure-of-arrays copies that mmcv's loop permutes as it picks and
// drops: the CPU kernel's with 64-bit positions, the CUDA kernel's with 32-bit ones.
template <class Position>
struct SoftNmsBoxes {
  float *x1, *y1, *x2, *y2, *score, *area;
  Position* index;  // each box's index in the input

  // Input box k (boxes [n, 4], scores [n]) at position k.
  OPBRIDGE_HD void Load(Position k, const float* boxes, const float* scores, float offset) const {
    const float* box = boxes + 4 * static_cast<int64_t>(k);
    x1[k] = box[0];
    y1[k] = box[1];
    x2[k] = box[2];
    y2[k] = box[3];
    score[k] = scores[k];
    area[k] = SoftNmsArea(box[0], box[1], box[2], box[3], offset);
    index[k] = k;
  }
  // The box at position `from` to position `to` (mmcv's move of the last box into a hole).
  OPBRIDGE_HD void Move(Position to, Position from) const {
    x1[to] = x1[from];
    y1[to] = y1[from];
    x2[to] = x2[from];
    y2[to] = y2[from];
    score[to] = score[from];
    area[to] = area[from];
    index[to] = index[from];
  }
};

// IoU of the picked box b with box k, mmcv's operand orders: std::max(0, NaN) is 0, std::min(v, NaN)
// is v, and a zero union gives NaN or inf (a degenerate box), which later rules handle as mmcv does.
OPBRIDGE_HD inline float SoftNmsIou(float bx1, float by1, float bx2, float by2, float barea, float x1, float y1,
                                    float x2, float y2, float area, float offset) {
  const float w = Max(0.0f, Min(bx2, x2) - Max(bx1, x1) + offset);
  const float h = Max(0.0f, Min(by2, y2) - Max(by1, y1) + offset);
  const float inter = w * h;
  return inter / (barea + area - inter);
}

// e^x for a float x, evaluated in double and rounded to float once: the correctly rounded float
// except where e^x lies within about 5e-16 (relative) of a midpoint between two floats, and the same
// bits on every CPU and on the GPU (IEEE double operations, no contraction: core/host_device.h).
// mmcv calls std::exp(float), glibc's expf, whose results are within 0.502 ulp: the two differ by an
// ulp on rare inputs, where this one is the closer. Steps: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in
// two parts, fdlibm's: n * kLn2High is exact), e^r by its Taylor series to r^13 (truncation below
// 2^-57 relative), times 2^n built from its bits. NaN stays NaN; below -104 the float is 0 (e^x <
// 2^-150); above 88.7228317 (the largest float whose e^x rounds to a finite float) it is +inf.
// About 30 double operations: full speed on Hopper and on the A100, 1/32 to 1/64 of float speed
// on consumer GPUs (sm_75, 86, 89), where soft-NMS's gaussian steps with many overlaps slow down.
OPBRIDGE_HD inline float ExpRoundedOnce(float x) {
  if (!(x >= -104.0f)) return x != x ? x : 0.0f;
  if (x > 88.72283172607421875f) return INFINITY;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  constexpr double kLog2e = 1.4426950408889634, kLn2High = 6.93147180369123816490e-01,
                   kLn2Low = 1.90821492927058770002e-10;
  const double xd = x;
  const double n = (xd * kLog2e + kShift) - kShift;
  const double r = (xd - n * kLn2High) - n * kLn2Low;
  double p = 1.0 / 6227020800.0;  // 1 / 13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(n) + 1023) << 52;  // n in [-150, 128]
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return static_cast<float>(p * scale);
}

// The decays, written as the CPU kernel's per-method loops use them (score times the weight).
OPBRIDGE_HD inline float NaiveDecay(float score, float iou, float threshold) {
  return score * (iou >= threshold ? 0.0f : 1.0f);
}
OPBRIDGE_HD inline float LinearDecay(float score, float iou, float threshold) {
  return score * (iou >= threshold ? 1.0f - iou : 1.0f);
}
// exp(-IoU^2 / sigma), the exponent in float as mmcv computes it; a box that does not overlap
// (IoU 0, most of them) keeps its score: the weight would be exactly 1.
OPBRIDGE_HD inline float GaussianDecay(float score, float iou, float sigma) {
  return iou != 0.0f ? score * ExpRoundedOnce(-(iou * iou) / sigma) : score;
}
OPBRIDGE_HD inline float SoftNmsDecay(const SoftNmsParams& p, float score, float iou) {
  if (p.method == SoftNmsMethod::kNaive) return NaiveDecay(score, iou, p.iou_threshold);
  if (p.method == SoftNmsMethod::kLinear) return LinearDecay(score, iou, p.iou_threshold);
  return GaussianDecay(score, iou, p.sigma);
}

// The next pick as a maximum: mmcv's scan starts at the first remaining position and moves to a
// later one only on a strictly greater score, so it picks the first position of the largest score
// (+0 and -0 equal), keeps a NaN that stands first and never moves to a NaN. As a 64-bit key, the
// score's order-preserving bits (-0 as +0) above the position's complement, whose maximum over the
// remaining boxes, taken in any order, is the pick: a NaN at `first` gets the largest key, a NaN
// elsewhere 0 (never the maximum: the box at `first` always has a key above 0).
OPBRIDGE_HD inline uint64_t SoftNmsPickKey(float score, uint32_t position, uint32_t first) {
  uint32_t order;
  if (score != score) {
    if (position != first) return 0;
    order = 0xFFFFFFFFu;
  } else {
    const uint32_t bits = FloatBits(score == 0.0f ? 0.0f : score);
    order = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  }
  return (static_cast<uint64_t>(order) << 32) | (0xFFFFFFFFu - position);
}
OPBRIDGE_HD inline uint32_t SoftNmsPickPosition(uint64_t key) {
  return 0xFFFFFFFFu - static_cast<uint32_t>(key & 0xFFFFFFFFu);
}

// mmcv's drop-and-move pass over positions [begin, end), in closed form. Every box there is decayed
// before the pass, so which boxes drop (score < min_score; never a NaN) is known up front: with
// `drops` of them, the pass leaves the survivors in [begin, end - drops). There a survivor keeps its
// position, and the holes, taken in position order, are filled by the survivors beyond end - drops
// taken from the end (the pass pops the last box into each hole, discarding popped boxes that drop).
// So the hole with `drops_before` drops ahead of it has rank drops_before, and the survivor at
// position q >= end - drops, with drops_before drops ahead of it, moves to the hole whose rank is
// the number of survivors after it:
OPBRIDGE_HD inline int32_t SoftNmsMoverRank(int32_t q, int32_t end, int32_t drops, int32_t drops_before) {
  return (end - 1 - q) - (drops - drops_before);
}

// The positions [*first, *last) of [begin, end) that thread `thread` of `threads` takes in a step:
// contiguous runs, so that a thread's drops before each of its positions are its run's offset plus
// what it counted. The run length is odd: a warp's lanes then read words `per` apart in distinct
// shared-memory banks (an even length put 2 to 8 lanes in one bank).
OPBRIDGE_HD inline void SoftNmsThreadRange(int32_t begin, int32_t end, int32_t thread, int32_t threads,
                                           int32_t* first, int32_t* last) {
  const int32_t per = ((end - begin + threads - 1) / threads) | 1;
  const int32_t start = begin + thread * per;
  *first = start < end ? start : end;
  *last = end - *first > per ? *first + per : end;
}

}  // namespace opbridge::shared
