// NMSMatch kernel tests: mmdeploy's kernel written out from its source (the classic loop, its
// nms_match_iou verbatim) against the kernel (grid, pruning, first_suppressor) on random and
// exact-ratio boxes, hand-worked cases of the IoU's eps, the row order and the score threshold,
// degenerate boxes, and thread independence. The sweeps through ORT are in
// tests/python/test_nms_match.py.
#include "kernels/cpu/nms_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "half_values.h"
#include "nms_device_code.h"
#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
using Rows = std::vector<int64_t>;  // flattened (batch, class, kept, suppressed) rows

// mmdeploy's nms_match_iou, as its source writes it (`auto eps = 1e-10;` is a double; the
// quotient is rounded to float on return).
float SpecIou(const float* box1, const float* box2) {
  auto inter_x1 = std::max(box1[0], box2[0]);
  auto inter_y1 = std::max(box1[1], box2[1]);
  auto inter_x2 = std::min(box1[2], box2[2]);
  auto inter_y2 = std::min(box1[3], box2[3]);
  auto eps = 1e-10;
  auto w = std::max(static_cast<float>(0), inter_x2 - inter_x1);
  auto h = std::max(static_cast<float>(0), inter_y2 - inter_y1);
  auto area1 = (box1[2] - box1[0]) * (box1[3] - box1[1]);
  auto area2 = (box2[2] - box2[0]) * (box2[3] - box2[1]);
  auto inter = w * h;
  auto ovr = inter / (area1 + area2 - inter + eps);
  return ovr;
}

// mmdeploy's NMSMatch kernel loop, with the stable order.
Rows SpecRows(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batch, int64_t classes,
              int64_t n, float iou_threshold, float score_threshold) {
  Rows rows;
  for (int64_t k = 0; k < batch; ++k) {
    for (int64_t g = 0; g < classes; ++g) {
      const float* sc = scores.data() + (k * classes + g) * n;
      const float* bx = boxes.data() + k * n * 4;
      std::vector<bool> select(n, true);
      const std::vector<int32_t> order = testing::TorchSortOrder(sc, n);
      for (int64_t _i = 0; _i < n; ++_i) {
        const int64_t i = order[_i];
        if (!select[i]) continue;
        std::vector<int64_t> v_i;
        for (int64_t _j = _i + 1; _j < n; ++_j) {
          const int64_t j = order[_j];
          if (!select[j]) continue;
          if (SpecIou(bx + 4 * i, bx + 4 * j) >= iou_threshold) {
            select[j] = false;
            v_i.push_back(j);
          }
        }
        if (sc[i] > score_threshold && !v_i.empty()) {
          for (int64_t j : v_i) rows.insert(rows.end(), {k, g, i, j});
        }
      }
    }
  }
  return rows;
}

Rows KernelRows(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batch, int64_t classes,
                int64_t n, float iou_threshold, float score_threshold, const TaskRunner& runner = SerialTaskRunner()) {
  NmsMatchParams p;
  EXPECT_TRUE(MakeNmsMatchParams(iou_threshold, score_threshold, &p).ok());
  EXPECT_EQ(boxes.size(), static_cast<size_t>(batch * n * 4));
  EXPECT_EQ(scores.size(), static_cast<size_t>(batch * classes * n));
  std::vector<int32_t> pairs(2 * batch * classes * n + 1, -7);
  std::vector<int64_t> counts(batch * classes + 1, -1);
  HeapScratchAllocator heap;
  EXPECT_TRUE(cpu::NmsMatch(p, boxes.data(), scores.data(), batch, classes, n, pairs.data(), counts.data(), heap,
                            runner).ok());
  int64_t total = 0;
  for (int64_t bc = 0; bc < batch * classes; ++bc) total += counts[bc];
  Rows rows(4 * total);
  cpu::WriteMatchRows(pairs.data(), counts.data(), batch, classes, n, rows.data());
  return rows;
}

// One problem's rows.
Rows Match(const std::vector<float>& boxes, const std::vector<float>& scores, float iou_threshold,
           float score_threshold = -kInf) {
  const int64_t n = static_cast<int64_t>(scores.size());
  return KernelRows(boxes, scores, 1, 1, n, iou_threshold, score_threshold);
}

enum class Layout { kObjects, kInteger, kScaledInteger };

// kObjects: random boxes around a few objects (IoUs spread over (0, 1)), every sixth a
// near-duplicate of the one before, some thin, a few inverted or zero-width. kInteger: small
// integer boxes on a small field, whose IoUs are ratios of small integers, often exactly a
// threshold. kScaledInteger: the same scaled by 0.37 and moved to 5000, where the coordinates
// round and those IoUs land within a few ulps of the thresholds.
std::vector<float> RandomBoxes(std::mt19937* rng, int64_t n, Layout layout = Layout::kObjects) {
  std::vector<float> boxes;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  if (layout != Layout::kObjects) {
    const bool scaled = layout == Layout::kScaledInteger;
    auto place = [&](int v) { return scaled ? 5000.0f + 0.37f * static_cast<float>(v) : static_cast<float>(v); };
    std::uniform_int_distribution<int> pos(0, 12), side(1, 6);
    for (int64_t k = 0; k < n; ++k) {
      const int x = pos(*rng), y = pos(*rng);
      boxes.insert(boxes.end(), {place(x), place(y), place(x + side(*rng)), place(y + side(*rng))});
    }
    return boxes;
  }
  const int objects = static_cast<int>(std::max<int64_t>(n / 8, 1));
  std::vector<float> cx(objects), cy(objects), sw(objects), sh(objects);
  for (int o = 0; o < objects; ++o) {
    cx[o] = 1000.0f * unit(*rng);
    cy[o] = 1000.0f * unit(*rng);
    sw[o] = std::exp(std::log(2.0f) + unit(*rng) * std::log(100.0f));
    sh[o] = std::exp(std::log(2.0f) + unit(*rng) * std::log(100.0f));
  }
  std::normal_distribution<float> jitter(0.0f, 0.15f);
  for (int64_t k = 0; k < n; ++k) {
    const int o = static_cast<int>((*rng)() % objects);
    float w = sw[o] * std::exp(jitter(*rng)), h = sh[o] * std::exp(jitter(*rng));
    const float x = cx[o] + jitter(*rng) * sw[o], y = cy[o] + jitter(*rng) * sh[o];
    const float r = unit(*rng);
    if (r < 0.02f) w = -w;           // inverted
    else if (r < 0.03f) w = 0.0f;    // zero width
    else if (r < 0.05f) h *= 1e-3f;  // thin
    boxes.insert(boxes.end(), {x - w / 2, y - h / 2, x + w / 2, y + h / 2});
    if (k % 6 == 5) {  // a near-duplicate of the box before (IoU ~0.9 to 1)
      for (int v = 0; v < 4; ++v) boxes[4 * k + v] = boxes[4 * (k - 1) + v] + 0.01f * sw[o] * jitter(*rng);
    }
  }
  return boxes;
}

std::vector<float> RandomScores(std::mt19937* rng, int64_t count) {
  std::vector<float> scores(count);
  for (auto& s : scores) s = static_cast<float>((*rng)() % 200) / 200.0f;  // many ties
  return scores;
}

TEST(NmsMatch, MatchesMmdeploysLoopOnRandomBoxes) {
  std::mt19937 rng(3);
  for (int64_t n : {0, 1, 2, 10, 47, 48, 300, 2000}) {
    for (float iou : {0.0f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 1.0f}) {
      for (Layout layout : {Layout::kObjects, Layout::kInteger, Layout::kScaledInteger}) {
        const std::vector<float> boxes = RandomBoxes(&rng, n, layout);
        const std::vector<float> scores = RandomScores(&rng, 2 * n);
        const Rows expected = SpecRows(boxes, scores, 1, 2, n, iou, 0.3f);
        EXPECT_EQ(KernelRows(boxes, scores, 1, 2, n, iou, 0.3f), expected)
            << "n=" << n << " iou=" << iou << " layout=" << static_cast<int>(layout);
        if (n >= 300 && iou < 1.0f) {
          EXPECT_GT(expected.size(), 4 * 5u) << n << " " << iou;  // suppression happens
        }
      }
    }
  }
}

// Thresholds at and a couple of ulps around the exact ratios of integer boxes, where the size
// and overlap pruning's margins matter. (Run with 6000 rounds: 18000 problems agreed.)
TEST(NmsMatch, PruningAgreesAtThresholdsNearExactRatios) {
  std::mt19937 rng(99);
  for (int round = 0; round < 150; ++round) {
    for (Layout layout : {Layout::kObjects, Layout::kInteger, Layout::kScaledInteger}) {
      const int64_t n = 200 + static_cast<int64_t>(rng() % 800);
      const std::vector<float> boxes = RandomBoxes(&rng, n, layout);
      const std::vector<float> scores = RandomScores(&rng, n);
      const float ratios[] = {1.0f / 3, 0.5f, 2.0f / 3, 0.25f, 0.75f, 0.2f, 0.6f, 1.0f / 7};
      float iou = ratios[rng() % 8];
      const int nudge = static_cast<int>(rng() % 5) - 2;  // a couple of ulps either side
      for (int u = 0; u < std::abs(nudge); ++u) iou = std::nextafter(iou, nudge > 0 ? 1.0f : 0.0f);
      ASSERT_EQ(KernelRows(boxes, scores, 1, 1, n, iou, -kInf), SpecRows(boxes, scores, 1, 1, n, iou, -kInf))
          << round << " " << static_cast<int>(layout) << " " << iou;
    }
  }
}

TEST(NmsMatch, IouOfHalfReachesHalfDespiteTheEps) {
  // Box 1 is the left half of box 0: IoU 1 / (2 + 1e-10) rounds to 0.5f, so it reaches 0.5.
  const std::vector<float> boxes = {0, 0, 2, 1, 0, 0, 1, 1};
  EXPECT_EQ(SpecIou(&boxes[0], &boxes[4]), 0.5f);
  EXPECT_EQ(Match(boxes, {0.9f, 0.8f}, 0.5f), (Rows{0, 0, 0, 1}));
  EXPECT_EQ(Match(boxes, {0.9f, 0.8f}, std::nextafter(0.5f, 1.0f)), Rows{});
}

TEST(NmsMatch, TheEpsIsAddedInDouble) {
  // Boxes of 2^-4 x 2^-5 and 2^-5 x 2^-5: IoU exactly 0.5 without eps. The union 2^-9 plus
  // 1e-10 in double lowers the quotient by 5.1e-8 relative, more than half a float ulp: it
  // rounds to the float below 0.5. (Added in float, 1e-10 is below half an ulp of 2^-9 and the
  // IoU would stay 0.5.)
  const std::vector<float> boxes = {0, 0, 0.0625f, 0.03125f, 0, 0, 0.03125f, 0.03125f};
  const float below = std::nextafter(0.5f, 0.0f);
  EXPECT_EQ(SpecIou(&boxes[0], &boxes[4]), below);
  EXPECT_EQ(Match(boxes, {0.9f, 0.8f}, 0.5f), Rows{});
  EXPECT_EQ(Match(boxes, {0.9f, 0.8f}, below), (Rows{0, 0, 0, 1}));
  // Twin boxes of area ~1e-10 have an IoU of ~0.5 (1e-10 / 2e-10), not 1.
  const std::vector<float> tiny = {0, 0, 1e-5f, 1e-5f, 0, 0, 1e-5f, 1e-5f};
  EXPECT_NEAR(SpecIou(&tiny[0], &tiny[4]), 0.5f, 1e-3f);
  EXPECT_EQ(Match(tiny, {0.9f, 0.8f}, 0.49f), (Rows{0, 0, 0, 1}));
  EXPECT_EQ(Match(tiny, {0.9f, 0.8f}, 0.51f), Rows{});
}

// The rule's shortcut for pairs without overlap gives mmdeploy's answer, the double division of every
// pair: boxes apart, touching, inside each other, degenerate (zero, negative and infinite sides),
// NaN coordinates, at thresholds below, at and above 0 and NaN.
TEST(NmsMatch, TheRuleSkipsTheDivisionOnlyWhereItsAnswerIsKnown) {
  const auto divided = [](const shared::NmsBox& i, const shared::NmsBox& j, float threshold) {
    const float w = shared::Max(0.0f, shared::Min(i.x2, j.x2) - shared::Max(i.x1, j.x1));
    const float h = shared::Max(0.0f, shared::Min(i.y2, j.y2) - shared::Max(i.y1, j.y1));
    const float inter = w * h;
    const float union_area = i.area + j.area - inter;
    return static_cast<float>(inter / (static_cast<double>(union_area) + 1e-10)) >= threshold;
  };
  const float values[] = {0.0f, 1.0f, 2.0f, 3.0f, -1.0f, 1e-30f, 1e30f, kInf, -kInf, kNaN};
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> pick(0, 9);
  int64_t without_overlap = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    float c[8];
    for (float& v : c) v = values[pick(rng)];
    const shared::NmsBox i = shared::MakeNmsBox(c, 0.0f), j = shared::MakeNmsBox(c + 4, 0.0f);
    const float w = shared::Max(0.0f, shared::Min(i.x2, j.x2) - shared::Max(i.x1, j.x1));
    const float h = shared::Max(0.0f, shared::Min(i.y2, j.y2) - shared::Max(i.y1, j.y1));
    without_overlap += w * h == 0.0f;
    for (float threshold : {-1.0f, -0.0f, 0.0f, 1e-12f, 0.5f, 1.0f, kNaN}) {
      ASSERT_EQ(shared::MmdeployMatchSuppresses(i, j, threshold), divided(i, j, threshold))
          << "boxes [" << c[0] << ", " << c[1] << ", " << c[2] << ", " << c[3] << "] and [" << c[4] << ", " << c[5]
          << ", " << c[6] << ", " << c[7] << "], threshold " << threshold;
    }
  }
  EXPECT_GT(without_overlap, 50000);  // the shortcut's cases are tested, not only the division's
}

TEST(NmsMatch, RowsByKeptBoxThenSuppressedBoxInScoreOrder) {
  // Two clusters: A = {0, 2, 4} (identical boxes), B = {1, 3} (identical), C = {5} alone.
  const std::vector<float> a = {0, 0, 10, 10}, b = {50, 50, 60, 60}, c = {100, 0, 110, 10};
  std::vector<float> boxes;
  for (const auto* box : {&a, &b, &a, &b, &a, &c}) boxes.insert(boxes.end(), box->begin(), box->end());
  // Order: 3 (0.9), 4 (0.8), 1 (0.7), 2 (0.6), 0 (0.5), 5 (0.4). Kept 3 takes 1; kept 4 takes 2
  // then 0; 5 suppresses nothing and emits nothing.
  const std::vector<float> scores = {0.5f, 0.7f, 0.6f, 0.9f, 0.8f, 0.4f};
  EXPECT_EQ(Match(boxes, scores, 0.5f), (Rows{0, 0, 3, 1, 0, 0, 4, 2, 0, 0, 4, 0}));
  // Score threshold: strict, on the kept box only; the suppressed boxes may score below it.
  EXPECT_EQ(Match(boxes, scores, 0.5f, 0.8f), (Rows{0, 0, 3, 1}));
  EXPECT_EQ(Match(boxes, scores, 0.5f, 0.79f), (Rows{0, 0, 3, 1, 0, 0, 4, 2, 0, 0, 4, 0}));
  EXPECT_EQ(Match(boxes, scores, 0.5f, 0.9f), Rows{});
}

TEST(NmsMatch, TiesKeepTheLowerIndexFirstAndNaNScoresComeFirstButNeverReport) {
  const std::vector<float> box = {0, 0, 4, 4};
  std::vector<float> boxes;
  for (int k = 0; k < 4; ++k) boxes.insert(boxes.end(), box.begin(), box.end());
  EXPECT_EQ(Match(boxes, {0.5f, 0.5f, 0.5f, 0.5f}, 0.5f), (Rows{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}));
  EXPECT_EQ(Match(boxes, {0.5f, -0.0f, 0.0f, 0.5f}, 0.5f), (Rows{0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2}));
  // The NaN-scored box 2 comes first and takes every twin, but NaN > threshold is false.
  EXPECT_EQ(Match(boxes, {0.5f, 0.4f, kNaN, 0.3f}, 0.5f), Rows{});
  EXPECT_EQ(Match(boxes, {0.5f, 0.4f, kNaN, 0.3f}, 0.5f, -kInf), Rows{});
}

TEST(NmsMatch, DegenerateBoxesMatchNothingAboveZero) {
  // Twins of box 0 that are inverted, zero-width, NaN, infinite or overflowing: none matches box
  // 0 or the real twin 7 at a threshold > 0, so only box 0 takes box 7.
  const std::vector<float> boxes = {0, 0, 4, 4,          4, 0, 0, 4,         4, 4, 0, 0,  2, 0, 2, 4,
                                    kNaN, 0, 4, 4,       0, 0, kInf, 4,      -3e38f, 0, 3e38f, 4,
                                    0, 0, 4, 4};
  const std::vector<float> scores = {0.9f, 0.8f, 0.8f, 0.8f, 0.8f, 0.8f, 0.8f, 0.1f};
  for (float t : {1e-6f, 0.3f, 1.0f}) EXPECT_EQ(Match(boxes, scores, t), (Rows{0, 0, 0, 7})) << t;
  EXPECT_EQ(Match(boxes, scores, 0.3f), SpecRows(boxes, scores, 1, 1, 8, 0.3f, -kInf));
}

TEST(NmsMatch, AtZeroEveryPairWithANumberForAnIouMatches) {
  // IoU >= 0: disjoint boxes (IoU +0) and inverted boxes (0 over a union that may be negative:
  // -0) match too; a NaN IoU (box 3) does not; nor does 0 / inf (+0)... which does: inf union.
  const std::vector<float> boxes = {0, 0, 4, 4,  100, 100, 101, 101,  9, 0, 1, 4,  kNaN, 0, 1, 1,
                                    0, 0, kInf, 4,  -20, -20, -30, -30};
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f};
  const Rows expected = SpecRows(boxes, scores, 1, 1, 6, 0.0f, -kInf);
  EXPECT_EQ(expected, (Rows{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 5}));
  EXPECT_EQ(Match(boxes, scores, 0.0f), expected);
  // An inverted box first takes the others as well: (8 x 8 inverted area 64, union 64 + 16 + eps).
  const std::vector<float> inverted_first = {9, 9, 1, 1, 0, 0, 4, 4, 2, 2, 3, 3};
  EXPECT_EQ(Match(inverted_first, {0.9f, 0.8f, 0.7f}, 0.0f), (Rows{0, 0, 0, 1, 0, 0, 0, 2}));
  // An inverted box with a negative area of -64 against a 2 x 2 box: union -60 + eps: IoU -0.
  const std::vector<float> negative = {9, 1, 1, 9, 0, 0, 2, 2};
  EXPECT_TRUE(std::signbit(SpecIou(&negative[0], &negative[4])));
  EXPECT_EQ(Match(negative, {0.9f, 0.8f}, 0.0f), (Rows{0, 0, 0, 1}));
}

TEST(NmsMatch, BatchesAndClassesAreSeparateProblems) {
  // Batch 0: boxes 0 and 1 identical, 2 apart; batch 1: 1 and 2 identical.
  const std::vector<float> boxes = {0, 0, 4, 4, 0, 0, 4, 4, 10, 10, 12, 12,  //
                                    0, 0, 4, 4, 10, 10, 12, 12, 10, 10, 12, 12};
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, /**/ 0.1f, 0.8f, 0.7f,  //
                                     0.9f, 0.8f, 0.7f, /**/ 0.1f, 0.2f, 0.3f};
  const Rows expected = {0, 0, 0, 1, /**/ 0, 1, 1, 0, /**/ 1, 0, 1, 2, /**/ 1, 1, 2, 1};
  EXPECT_EQ(KernelRows(boxes, scores, 2, 2, 3, 0.5f, 0.05f), expected);
  EXPECT_EQ(SpecRows(boxes, scores, 2, 2, 3, 0.5f, 0.05f), expected);
  EXPECT_TRUE(KernelRows({}, {}, 0, 3, 5, 0.5f, 0.05f).empty());
  EXPECT_TRUE(KernelRows(boxes, {}, 2, 0, 3, 0.5f, 0.05f).empty());
  EXPECT_TRUE(KernelRows({}, {}, 2, 3, 0, 0.5f, 0.05f).empty());
}

TEST(NmsMatch, ResultsDoNotDependOnThreads) {
  std::mt19937 rng(11);
  const int64_t batch = 2, classes = 15, n = 1500;
  std::vector<float> boxes;
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<float> one = RandomBoxes(&rng, n);
    boxes.insert(boxes.end(), one.begin(), one.end());
  }
  const std::vector<float> scores = RandomScores(&rng, batch * classes * n);
  for (float iou : {0.0f, 0.5f}) {
    const Rows serial = KernelRows(boxes, scores, batch, classes, n, iou, 0.2f);
    EXPECT_GT(serial.size(), 4000u);
    EXPECT_EQ(KernelRows(boxes, scores, batch, classes, n, iou, 0.2f, testing::ThreadedTaskRunner(3)), serial);
  }
}

TEST(NmsMatchParams, RejectBadValuesAndShapes) {
  NmsMatchParams p;
  EXPECT_EQ(MakeNmsMatchParams(1.5f, 0.f, &p).message(), "iou_threshold must lie in [0, 1], got 1.5");
  EXPECT_EQ(MakeNmsMatchParams(-0.1f, 0.f, &p).message(), "iou_threshold must lie in [0, 1], got -0.1");
  EXPECT_EQ(MakeNmsMatchParams(kNaN, 0.f, &p).message(), "iou_threshold must lie in [0, 1], got nan");
  EXPECT_EQ(MakeNmsMatchParams(0.5f, kNaN, &p).message(), "score_threshold must not be NaN");
  EXPECT_TRUE(MakeNmsMatchParams(0.0f, -kInf, &p).ok());
  EXPECT_TRUE(MakeNmsMatchParams(1.0f, kInf, &p).ok());
  EXPECT_TRUE(CheckThresholdShape("iou_threshold", {1}).ok());
  EXPECT_TRUE(CheckThresholdShape("iou_threshold", {}).ok());
  EXPECT_EQ(CheckThresholdShape("score_threshold", {2}).message(),
            "score_threshold must have shape [1] or [] (one value), got shape [2]");
  EXPECT_EQ(CheckThresholdShape("iou_threshold", {1, 1}).message(),
            "iou_threshold must have shape [1] or [] (one value), got shape [1, 1]");
  EXPECT_EQ(CheckThresholdShape("iou_threshold", {0}).message(),
            "iou_threshold must have shape [1] or [] (one value), got shape [0]");
  EXPECT_EQ(CheckNmsMatchShapes({1, 3, 5}, {1, 2, 3}).message(), "boxes must have shape [B, N, 4], got shape [1, 3, 5]");
  EXPECT_EQ(CheckNmsMatchShapes({1, 3, 4}, {1, 2, 4}).message(),
            "scores must have shape [B, C, N] with B = 1 and N = 3 (as boxes), got shape [1, 2, 4]");
}

// The CUDA kernels' steps (kernels/cuda/nms.cu's NmsMatch) run on the host: every box of each problem
// through the tile pipeline with mmdeploy's rule, then the first kept suppressor of each box and the
// rows, on the mask path, the band path and a mix: the CPU kernel's rows, with NaN scores first and
// scores below the report threshold, thresholds 0 (every pair matches) to 1, degenerate boxes.
TEST(NmsMatchDeviceCode, WritesTheCpuKernelsRows) {
  std::mt19937 rng(41);
  for (int64_t n : {1, 9, 130, 700}) {
    for (Layout layout : {Layout::kObjects, Layout::kInteger, Layout::kScaledInteger}) {
      const int64_t batch = 2, classes = 2;
      std::vector<float> boxes;
      for (int64_t b = 0; b < batch; ++b) {
        const std::vector<float> image = RandomBoxes(&rng, n, layout);
        boxes.insert(boxes.end(), image.begin(), image.end());
      }
      std::vector<float> scores = RandomScores(&rng, batch * classes * n);
      scores[scores.size() / 3] = kNaN;
      for (float iou : {0.0f, 0.3f, 0.7f, 1.0f}) {
        NmsMatchParams p;
        ASSERT_TRUE(MakeNmsMatchParams(iou, 0.3f, &p).ok());
        const Rows cpu = KernelRows(boxes, scores, batch, classes, n, iou, 0.3f);
        for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}, int64_t{2000}}) {
          ASSERT_EQ(testing::NmsMatchOnHost(p, boxes, scores, batch, classes, n, budget), cpu)
              << "n=" << n << " iou=" << iou << " layout=" << static_cast<int>(layout) << " budget " << budget;
        }
      }
    }
  }
}


// Half storage: the CPU kernel, serially and on 3 threads, and the device code report exactly the
// float32 kernel's rows on the half values, on scores packed near 0.5 (rounding ties them), with the
// score threshold at a half value, every budget path.
template <class T>
void ExpectHalfNmsMatch() {
  std::mt19937 rng(42);
  const int64_t batch = 2, classes = 2, n = 400;
  std::vector<float> boxes;
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<float> image = RandomBoxes(&rng, n, Layout::kObjects);
    boxes.insert(boxes.end(), image.begin(), image.end());
  }
  std::vector<float> scores = RandomScores(&rng, batch * classes * n);
  for (size_t k = 0; k < scores.size(); k += 2) scores[k] = 0.5f + scores[k] * 1e-3f;
  const std::vector<T> stored_boxes = testing::StoredAs<T>(boxes), stored_scores = testing::StoredAs<T>(scores);
  const std::vector<float> half_boxes = testing::FloatsOf(stored_boxes), half_scores = testing::FloatsOf(stored_scores);
  bool rounding_mattered = false;
  for (float iou : {0.3f, 0.7f}) {
    const Rows float32 = KernelRows(half_boxes, half_scores, batch, classes, n, iou, 0.5f);
    rounding_mattered |= float32 != KernelRows(boxes, scores, batch, classes, n, iou, 0.5f);
    NmsMatchParams p;
    ASSERT_TRUE(MakeNmsMatchParams(iou, 0.5f, &p).ok());
    for (int threads : {1, 3}) {
      std::vector<int32_t> pairs(2 * batch * classes * n + 1, -7);
      std::vector<int64_t> counts(batch * classes + 1, -1);
      HeapScratchAllocator heap;
      ASSERT_TRUE(cpu::NmsMatch(p, stored_boxes.data(), stored_scores.data(), batch, classes, n, pairs.data(),
                                counts.data(), heap, testing::ThreadedTaskRunner(threads)).ok());
      int64_t total = 0;
      for (int64_t bc = 0; bc < batch * classes; ++bc) total += counts[bc];
      Rows rows(4 * total);
      cpu::WriteMatchRows(pairs.data(), counts.data(), batch, classes, n, rows.data());
      ASSERT_EQ(rows, float32) << "iou " << iou << ", " << threads << " threads";
    }
    for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}, int64_t{2000}}) {
      ASSERT_EQ(testing::NmsMatchOnHost(p, stored_boxes, stored_scores, batch, classes, n, budget), float32)
          << "iou " << iou << ", budget " << budget;
    }
  }
  EXPECT_TRUE(rounding_mattered);
}

TEST(NmsMatchHalfStorage, Float16ReportsTheFloat32KernelsRowsOnTheHalfValues) { ExpectHalfNmsMatch<shared::Float16>(); }
TEST(NmsMatchHalfStorage, BFloat16ReportsTheFloat32KernelsRowsOnTheHalfValues) { ExpectHalfNmsMatch<shared::BFloat16>(); }

}  // namespace
}  // namespace opbridge
