// Rotated NMS kernel tests: hand-worked cases of both rules, degenerate boxes and thread
// independence. The sweeps against a float64 reference are in tests/python/test_nms_rotated.py.
#include "kernels/cpu/nms_rotated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "half_values.h"
#include "kernels/shared/box_iou_rotated.h"
#include "nms_device_code.h"
#include "task_runners.h"

namespace opbridge {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
using Keeps = std::vector<int64_t>;

std::vector<int64_t> Keep(const NmsRotatedParams& p, const std::vector<float>& boxes, const std::vector<float>& scores,
                          const std::vector<int64_t>* categories = nullptr,
                          const TaskRunner& runner = SerialTaskRunner()) {
  const int64_t n = static_cast<int64_t>(scores.size());
  std::vector<int64_t> keep(n);
  int64_t kept = -1;
  HeapScratchAllocator heap;
  EXPECT_TRUE(cpu::NmsRotated(p, boxes.data(), scores.data(), categories ? categories->data() : nullptr, n, keep.data(),
                              &kept, heap, runner).ok());
  keep.resize(kept);
  return keep;
}

// mmcv's rule (IoU >= threshold).
NmsRotatedParams Mmcv(float iou_threshold, int64_t clockwise = 1) {
  NmsRotatedParams p;
  EXPECT_TRUE(MakeNmsRotatedParams(iou_threshold, clockwise, &p).ok());
  return p;
}

// mmdeploy's rule (IoU > threshold, score > score_threshold): the (batch, class, box) rows,
// flattened. boxes [batch, n, 5], scores [batch, classes, n].
std::vector<int64_t> Rows(float iou_threshold, float score_threshold, const std::vector<float>& boxes,
                          const std::vector<float>& scores, int64_t batch, int64_t classes, int64_t n,
                          const TaskRunner& runner = SerialTaskRunner()) {
  MulticlassNmsRotatedParams p;
  EXPECT_TRUE(MakeMulticlassNmsRotatedParams(iou_threshold, score_threshold, &p).ok());
  EXPECT_EQ(boxes.size(), static_cast<size_t>(batch * n * 5));
  EXPECT_EQ(scores.size(), static_cast<size_t>(batch * classes * n));
  std::vector<int32_t> kept(batch * classes * n + 1);
  std::vector<int64_t> counts(batch * classes + 1, -1);
  HeapScratchAllocator heap;
  EXPECT_TRUE(cpu::MulticlassNmsRotated(p, boxes.data(), scores.data(), batch, classes, n, kept.data(), counts.data(),
                                        heap, runner).ok());
  int64_t total = 0;
  for (int64_t bc = 0; bc < batch * classes; ++bc) total += counts[bc];
  std::vector<int64_t> rows(3 * total);
  cpu::WriteSelectedRows(kept.data(), counts.data(), batch, classes, n, rows.data());
  return rows;
}

// The box indices of a single (batch, class) problem's rows.
Keeps RowBoxes(float iou_threshold, const std::vector<float>& boxes, const std::vector<float>& scores) {
  const auto rows = Rows(iou_threshold, -kInf, boxes, scores, 1, 1, static_cast<int64_t>(scores.size()));
  Keeps kept;
  for (size_t r = 2; r < rows.size(); r += 3) kept.push_back(rows[r]);
  return kept;
}

float Iou(const std::vector<float>& boxes, int i, int j) {
  return shared::RotatedIou(shared::MakeRotatedBox(&boxes[5 * i]), shared::MakeRotatedBox(&boxes[5 * j]));
}

TEST(NmsRotated, IdenticalBoxesSuppressUnderBothRules) {
  // Box 0 three times (scores 0.5, 0.9, 0.7), a box far away (0.6).
  const std::vector<float> boxes = {10, 20, 8, 4, 0.7f, 10, 20, 8, 4, 0.7f, 10, 20, 8, 4, 0.7f, 100, 100, 5, 5, -0.3f};
  const std::vector<float> scores = {0.5f, 0.9f, 0.7f, 0.6f};
  for (float t : {0.3f, 0.5f, 0.99f}) EXPECT_EQ(Keep(Mmcv(t), boxes, scores), (Keeps{1, 3})) << t;
  for (float t : {0.0f, 0.3f, 0.5f, 0.99f}) EXPECT_EQ(RowBoxes(t, boxes, scores), (Keeps{1, 3})) << t;
  // Under IoU >= 0 the far box (IoU 0) is suppressed too.
  EXPECT_EQ(Keep(Mmcv(0.0f), boxes, scores), (Keeps{1}));
  // Exact coordinates: IoU exactly 1, which suppresses under IoU >= 1 but not under IoU > 1.
  const std::vector<float> exact = {10, 20, 4, 2, 0, 10, 20, 4, 2, 0};
  ASSERT_EQ(Iou(exact, 0, 1), 1.0f);
  EXPECT_EQ(Keep(Mmcv(1.0f), exact, {0.8f, 0.9f}), (Keeps{1}));
  EXPECT_EQ(RowBoxes(1.0f, exact, {0.8f, 0.9f}), (Keeps{1, 0}));
  EXPECT_EQ(RowBoxes(0.999f, exact, {0.8f, 0.9f}), (Keeps{1}));
}

TEST(NmsRotated, IouExactlyAtTheThreshold) {
  // Axis-aligned at theta 0, dyadic coordinates (also after the shift of both centres to their
  // midpoint): every vertex, crossing and area is exact, and so is the IoU.
  //   4 x 2 and 4 x 4 boxes 2 apart: intersection 2 x 2 = 4, union 8 + 16 - 4 = 20: IoU 0.2f.
  //   A 2 x 2 box inside a 4 x 4 one, off centre by a half: intersection 4, union 16: IoU 0.25.
  const std::vector<std::vector<float>> cases = {{0, 0, 4, 2, 0, 2, 0, 4, 4, 0},
                                                 {0, 0, 4, 4, 0, 0.5f, 0.5f, 2, 2, 0}};
  const float ious[] = {0.2f, 0.25f};
  for (int c = 0; c < 2; ++c) {
    const auto& boxes = cases[c];
    const float t = ious[c];
    ASSERT_EQ(Iou(boxes, 0, 1), t);
    ASSERT_EQ(Iou(boxes, 1, 0), t);
    const float above = std::nextafter(t, 1.0f), below = std::nextafter(t, 0.0f);
    for (const std::vector<float>& scores : {std::vector<float>{0.9f, 0.8f}, std::vector<float>{0.8f, 0.9f}}) {
      const Keeps first = {scores[0] > scores[1] ? 0 : 1};
      const Keeps both = {first[0], 1 - first[0]};
      // mmcv: IoU >= threshold suppresses.
      EXPECT_EQ(Keep(Mmcv(t), boxes, scores), first) << c;
      EXPECT_EQ(Keep(Mmcv(above), boxes, scores), both) << c;
      // mmdeploy: IoU > threshold suppresses.
      EXPECT_EQ(RowBoxes(t, boxes, scores), both) << c;
      EXPECT_EQ(RowBoxes(below, boxes, scores), first) << c;
    }
  }
}

TEST(NmsRotated, ClockwiseZeroNegatesTheta) {
  // Two long boxes along the diagonal y = x overlap (IoU ~0.4); with theta negated they lie along
  // y = -x, box 1's centre 4.2 away from box 0's axis, and do not meet.
  const std::vector<float> boxes = {0, 0, 10, 2, 0.785f, 3, 3, 10, 2, 0.7f};
  const std::vector<float> scores = {0.9f, 0.8f};
  EXPECT_EQ(Keep(Mmcv(0.2f, 1), boxes, scores), (Keeps{0}));
  EXPECT_EQ(Keep(Mmcv(0.2f, 0), boxes, scores), (Keeps{0, 1}));
  EXPECT_GT(Iou(boxes, 0, 1), 0.3f);

  // clockwise = 0 is clockwise = 1 on negated angles, bit for bit.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pos(0, 100), size(4, 30), angle(-7, 7), unit(0, 1);
  std::vector<float> random, negated, random_scores;
  for (int k = 0; k < 500; ++k) {
    const float b[5] = {pos(rng), pos(rng), size(rng), size(rng), angle(rng)};
    random.insert(random.end(), b, b + 5);
    negated.insert(negated.end(), {b[0], b[1], b[2], b[3], -b[4]});
    random_scores.push_back(unit(rng));
  }
  for (float t : {0.0f, 0.2f, 0.5f}) {
    const Keeps ccw = Keep(Mmcv(t, 0), random, random_scores);
    EXPECT_EQ(ccw, Keep(Mmcv(t, 1), negated, random_scores)) << t;
    if (t > 0) {
      EXPECT_NE(ccw, Keep(Mmcv(t, 1), random, random_scores)) << t;
    }
  }
}

TEST(NmsRotated, CategoriesNeverSuppressEachOther) {
  const float a[5] = {10, 10, 8, 4, 0.3f}, b[5] = {40, 10, 6, 6, -1.0f};
  std::vector<float> boxes;
  for (const float* box : {a, a, b, a, b, a}) boxes.insert(boxes.end(), box, box + 5);
  const std::vector<float> scores = {0.5f, 0.9f, 0.7f, 0.9f, 0.7f, 0.2f};
  const std::vector<int64_t> categories = {1, 0, 1, 1, 0, 0};
  // Score order 1, 3 (tie: lower index first), 2, 4, 0, 5; 0 duplicates 3 and 5 duplicates 1.
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, scores, &categories), (Keeps{1, 3, 2, 4}));
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, scores), (Keeps{1, 2}));
  // Under IoU >= 0 every box suppresses every later one of its category: one per category.
  EXPECT_EQ(Keep(Mmcv(0.0f), boxes, scores, &categories), (Keeps{1, 3}));
  // Far apart categories values, negative ones included.
  const std::vector<int64_t> wide = {-5, int64_t{1} << 40, -5, -5, int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, scores, &wide), (Keeps{1, 3, 2, 4}));
}

TEST(NmsRotated, DegenerateBoxesAreKeptAndSuppressNothing) {
  // A zero-width box through the middle of a 3 x 3 one: mmcv's arithmetic alone would give an
  // intersection of 9 (the zero-width box acts as a band, see box_iou_rotated.h).
  const std::vector<float> boxes = {0, 0, 0, 4, 0.3f, 0, 0, 3, 3, 0.3f};
  for (const std::vector<float>& scores : {std::vector<float>{0.9f, 0.8f}, std::vector<float>{0.8f, 0.9f}}) {
    const Keeps both = scores[0] > scores[1] ? Keeps{0, 1} : Keeps{1, 0};
    for (float t : {0.1f, 0.5f, 1.0f}) EXPECT_EQ(Keep(Mmcv(t), boxes, scores), both) << t;
    // mmdeploy's rule: kept even under IoU > 0 (mmdeploy's own kernel would suppress).
    for (float t : {0.0f, 0.5f}) EXPECT_EQ(RowBoxes(t, boxes, scores), both) << t;
    // Under IoU >= 0 an IoU of 0 suppresses, as in mmcv: only the first box is kept.
    EXPECT_EQ(Keep(Mmcv(0.0f), boxes, scores), Keeps{both[0]});
  }
  // Every degenerate variant of box B (h = 0, w < 0 < h, area below 1e-14, non-finite values),
  // scored above B: all kept, and B too; B's near copy (IoU ~0.9) is suppressed.
  const std::vector<std::vector<float>> variants = {{5, 5, 4, 0, 1},    {5, 5, -4, 2, 1},   {5, 5, 1e-8f, 1e-7f, 1},
                                                    {kNaN, 5, 4, 2, 1}, {5, 5, kInf, 2, 1}, {5, 5, 4, 2, kNaN},
                                                    {5, 5, 4, 2, -kInf}};
  std::vector<float> all, scores;
  for (const auto& v : variants) {
    all.insert(all.end(), v.begin(), v.end());
    scores.push_back(0.9f);
  }
  all.insert(all.end(), {5, 5, 4, 2, 1, 5, 5, 4, 2, 1.05f});
  scores.insert(scores.end(), {0.5f, 0.4f});
  const int64_t n = static_cast<int64_t>(variants.size());
  Keeps expected;
  for (int64_t k = 0; k <= n; ++k) expected.push_back(k);
  EXPECT_EQ(Keep(Mmcv(0.5f), all, scores), expected);
  // mmdeploy's rule: the same (the 1e-8 x 1e-7 box, area > 0, takes part, with an IoU of ~0).
  EXPECT_EQ(RowBoxes(0.5f, all, scores), expected);
  // Both sides negative: the |w| x |h| box, under both rules.
  const std::vector<float> flipped = {5, 5, -4, -2, 1, 5, 5, 4, 2, 1};
  EXPECT_EQ(Keep(Mmcv(0.5f), flipped, {0.8f, 0.9f}), (Keeps{1}));
  EXPECT_EQ(RowBoxes(0.5f, flipped, {0.9f, 0.8f}), (Keeps{0}));
}

TEST(NmsRotated, NaNScoresFirstTiesByIndex) {
  const std::vector<float> boxes = {0, 0, 4, 4, 0.2f, 0, 0, 4, 4, 0.2f, 0, 0, 4, 4, 0.2f, 0, 0, 4, 4, 0.2f};
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, {0.5f, kNaN, 0.9f, kNaN}), (Keeps{1}));
  EXPECT_EQ(Keep(Mmcv(1.0f), boxes, {0.5f, kNaN, 0.9f, kNaN}).front(), 1);
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, {0.5f, 0.5f, 0.5f, 0.5f}), (Keeps{0}));
  EXPECT_EQ(Keep(Mmcv(0.5f), boxes, {0.0f, -0.0f, -0.0f, 0.0f}), (Keeps{0}));
  EXPECT_TRUE(Keep(Mmcv(0.5f), {}, {}).empty());
}

TEST(MulticlassNmsRotated, RowsInBatchClassScoreOrderAfterTheScoreFilter) {
  // batch 2, classes 2, 3 boxes per batch.
  const std::vector<float> boxes = {10, 10, 8, 4, 0.3f, 10, 10, 8, 4, 0.3f, 40, 40, 5, 5, 1.0f,  // batch 0
                                    0,  0,  2, 2, 0,    10, 10, 8, 4, 0.3f, 10, 10, 8, 4, 0.3f};  // batch 1
  const std::vector<float> scores = {0.3f, 0.9f, 0.5f, 0.1f, 0.2f, 0.2f,    // batch 0: class 0, class 1
                                     0.2f, 0.6f, 0.7f, kNaN, 0.4f, 0.41f};  // batch 1
  // (0, 0): 1, then 2; 0 duplicates 1. (0, 1): nothing is > 0.2. (1, 0): 2 suppresses 1; 0 is not
  // > 0.2. (1, 1): 2 suppresses 1; the NaN score never passes.
  EXPECT_EQ(Rows(0.5f, 0.2f, boxes, scores, 2, 2, 3), (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 1, 0, 2, 1, 1, 2}));
  // Nothing suppressed under IoU > 1: every candidate, in score order.
  EXPECT_EQ(Rows(1.0f, 0.2f, boxes, scores, 2, 2, 3),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 1, 1, 1}));
  EXPECT_TRUE(Rows(0.5f, 0.95f, boxes, scores, 2, 2, 3).empty());
  EXPECT_TRUE(Rows(0.5f, 0.0f, {}, {}, 2, 2, 0).empty());
  EXPECT_TRUE(Rows(0.5f, 0.0f, boxes, {}, 2, 0, 3).empty());
}

TEST(MulticlassNmsRotated, ResultsDoNotDependOnThreads) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(0, 200), size(4, 40), angle(-7, 7), unit(0, 1);
  const int64_t batch = 2, classes = 40, n = 800;
  std::vector<float> boxes, scores(batch * classes * n);
  for (int64_t k = 0; k < batch * n; ++k) {
    boxes.insert(boxes.end(), {pos(rng), pos(rng), size(rng), size(rng), angle(rng)});
  }
  for (auto& s : scores) s = unit(rng);
  const auto serial = Rows(0.3f, 0.5f, boxes, scores, batch, classes, n);
  EXPECT_GT(serial.size(), 3u * 1000);
  EXPECT_EQ(serial, Rows(0.3f, 0.5f, boxes, scores, batch, classes, n, testing::ThreadedTaskRunner(3)));
}

TEST(NmsRotatedParams, RejectBadValuesAndShapes) {
  NmsRotatedParams p;
  EXPECT_EQ(MakeNmsRotatedParams(1.5f, 1, &p).message(), "iou_threshold must lie in [0, 1], got 1.5");
  EXPECT_EQ(MakeNmsRotatedParams(-0.1f, 1, &p).message(), "iou_threshold must lie in [0, 1], got -0.1");
  EXPECT_EQ(MakeNmsRotatedParams(kNaN, 1, &p).message(), "iou_threshold must lie in [0, 1], got nan");
  EXPECT_EQ(MakeNmsRotatedParams(kInf, 1, &p).message(), "iou_threshold must lie in [0, 1], got inf");
  ASSERT_TRUE(MakeNmsRotatedParams(0.0f, 0, &p).ok());
  EXPECT_EQ(p.iou_threshold, 0.0f);
  EXPECT_FALSE(p.clockwise);
  ASSERT_TRUE(MakeNmsRotatedParams(1.0f, 1, &p).ok());
  EXPECT_EQ(p.iou_threshold, 1.0f);
  EXPECT_TRUE(p.clockwise);

  MulticlassNmsRotatedParams m;
  EXPECT_EQ(MakeMulticlassNmsRotatedParams(1.5f, 0.0f, &m).message(), "iou_threshold must lie in [0, 1], got 1.5");
  EXPECT_EQ(MakeMulticlassNmsRotatedParams(kNaN, 0.0f, &m).message(), "iou_threshold must lie in [0, 1], got nan");
  EXPECT_EQ(MakeMulticlassNmsRotatedParams(0.5f, kNaN, &m).message(), "score_threshold must not be NaN");
  ASSERT_TRUE(MakeMulticlassNmsRotatedParams(0.3f, -kInf, &m).ok());
  EXPECT_EQ(m.iou_threshold, 0.3f);
  EXPECT_EQ(m.score_threshold, -kInf);

  EXPECT_EQ(CheckNmsRotatedShapes({3, 4}, {3}, nullptr).message(),
            "boxes must have shape [N, 5] (cx, cy, w, h, theta), got shape [3, 4]");
  EXPECT_EQ(CheckNmsRotatedShapes({15}, {3}, nullptr).message(),
            "boxes must have shape [N, 5] (cx, cy, w, h, theta), got shape [15]");
  EXPECT_EQ(CheckNmsRotatedShapes({kMaxNmsBoxes + 1, 5}, {kMaxNmsBoxes + 1}, nullptr).message(),
            "boxes has 2147483648 rows; at most 2147483647 are supported");
  EXPECT_EQ(CheckNmsRotatedShapes({3, 5}, {4}, nullptr).message(),
            "scores must have shape [N] with N = 3 (the number of boxes), got shape [4]");
  EXPECT_EQ(CheckNmsRotatedShapes({3, 5}, {3, 1}, nullptr).message(),
            "scores must have shape [N] with N = 3 (the number of boxes), got shape [3, 1]");
  const Shape short_idxs = {2}, idxs = {3};
  EXPECT_EQ(CheckNmsRotatedShapes({3, 5}, {3}, &short_idxs).message(),
            "idxs must have shape [N] with N = 3 (one category per box), got shape [2]");
  EXPECT_TRUE(CheckNmsRotatedShapes({3, 5}, {3}, &idxs).ok());
  EXPECT_TRUE(CheckNmsRotatedShapes({0, 5}, {0}, nullptr).ok());
  // The multi-class layout's shapes are the axis-aligned op's rule with 5 values per box.
  EXPECT_EQ(CheckMulticlassNmsShapes({2, 3, 4}, {2, 1, 3}, 5).message(),
            "boxes must have shape [B, N, 5], got shape [2, 3, 4]");
  EXPECT_EQ(CheckMulticlassNmsShapes({2, 3, 5}, {1, 1, 3}, 5).message(),
            "scores must have shape [B, C, N] with B = 2 and N = 3 (as boxes), got shape [1, 1, 3]");
  EXPECT_TRUE(CheckMulticlassNmsShapes({0, 3, 5}, {0, 4, 3}, 5).ok());
}

TEST(NmsRotated, ResultsDoNotDependOnThreads) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> pos(0, 300), size(4, 40), angle(-3.2f, 3.2f), unit(0, 1);
  const int64_t n = 3000;
  std::vector<float> boxes, scores(n);
  std::vector<int64_t> categories(n);
  for (int64_t k = 0; k < n; ++k) {
    boxes.insert(boxes.end(), {pos(rng), pos(rng), size(rng), size(rng), angle(rng)});
    scores[k] = unit(rng);
    categories[k] = static_cast<int64_t>(rng() % 15);
  }
  NmsRotatedParams p;
  ASSERT_TRUE(MakeNmsRotatedParams(0.3f, 1, &p).ok());
  const auto serial = Keep(p, boxes, scores, &categories);
  EXPECT_GT(serial.size(), 100u);
  EXPECT_EQ(serial, Keep(p, boxes, scores, &categories, testing::ThreadedTaskRunner(3)));
}

// Rotated boxes (cx, cy, w, h, theta) in clusters, so that many overlap: near-duplicates, equal
// angles side by side, boxes at multiples of 45 degrees, a few degenerate ones (zero or negative
// sides, tiny areas, NaN and infinite values), scores with ties and NaN.
void RotatedScene(std::mt19937* rng, int64_t n, std::vector<float>* boxes, std::vector<float>* scores) {
  std::uniform_real_distribution<float> centre(0.0f, 120.0f), side(2.0f, 40.0f), unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> kind(0, 39);
  for (int64_t i = 0; i < n; ++i) {
    float cx = centre(*rng), cy = centre(*rng), w = side(*rng), h = side(*rng);
    float theta = (unit(*rng) - 0.5f) * 6.4f;
    const int k = kind(*rng);
    if (k < 8 && i > 0) {  // a near-duplicate of the previous box
      cx = (*boxes)[5 * (i - 1)] + 0.5f * unit(*rng);
      cy = (*boxes)[5 * (i - 1) + 1];
      w = (*boxes)[5 * (i - 1) + 2];
      h = (*boxes)[5 * (i - 1) + 3];
      theta = (*boxes)[5 * (i - 1) + 4];
    }
    if (k == 8) theta = 0.785398163f;
    if (k == 9) w = 0.0f;
    if (k == 10) h = -h;
    if (k == 11) w = h = 1e-8f;
    if (k == 12) cx = kNaN;
    if (k == 13) theta = kInf;
    boxes->insert(boxes->end(), {cx, cy, w, h, theta});
    const float u = unit(*rng);
    scores->push_back(u < 0.03f ? kNaN : std::round(unit(*rng) * 30.0f) / 30.0f);
  }
}

constexpr int64_t kRotatedBudgets[] = {shared::kNmsMaskBudgetWords, 0, 500};  // all, none, some on the mask path

// The CUDA kernels' pipeline run on the host (tests/cpp/nms_device_code.h) with the rotated rules:
// mmcv's nms_rotated, with and without categories, either clockwise flag, thresholds 0 (every pair
// tested) to 1, on the mask path, the band path and a mix: the CPU kernel's kept boxes in its order.
TEST(NmsRotatedDeviceCode, KeepsTheCpuKernelsBoxesInTheirOrder) {
  std::mt19937 rng(31);
  for (int64_t n : {0, 1, 9, 150, 700}) {
    std::vector<float> boxes, scores;
    RotatedScene(&rng, n, &boxes, &scores);
    std::vector<int64_t> categories(n);
    for (int64_t k = 0; k < n; ++k) categories[k] = (k * 5) % 3;
    for (float threshold : {0.0f, 0.1f, 0.5f, 1.0f}) {
      for (int64_t clockwise : {0, 1}) {
        for (const std::vector<int64_t>* cats : {static_cast<const std::vector<int64_t>*>(nullptr),
                                                 static_cast<const std::vector<int64_t>*>(&categories)}) {
          const NmsRotatedParams p = Mmcv(threshold, clockwise);
          const Keeps cpu = Keep(p, boxes, scores, cats);
          for (int64_t budget : kRotatedBudgets) {
            ASSERT_EQ(testing::NmsRotatedOnHost(p, boxes, scores, cats ? cats->data() : nullptr, budget), cpu)
                << n << " boxes, threshold " << threshold << ", clockwise " << clockwise
                << (cats ? ", categories" : "") << ", budget " << budget;
          }
        }
      }
    }
  }
}

// mmdeploy's NMSRotated (IoU > threshold, the score filter, per batch and class).
TEST(MulticlassNmsRotatedDeviceCode, KeepsTheCpuKernelsRows) {
  std::mt19937 rng(32);
  const int64_t batch = 2, classes = 3, n = 300;
  std::vector<float> boxes, scores, unused;
  for (int64_t b = 0; b < batch; ++b) RotatedScene(&rng, n, &boxes, &unused);
  for (int64_t bc = 0; bc < batch * classes; ++bc) {
    std::vector<float> class_scores, unused_boxes;
    RotatedScene(&rng, n, &unused_boxes, &class_scores);
    scores.insert(scores.end(), class_scores.begin(), class_scores.end());
  }
  for (float score_threshold : {-kInf, 0.5f}) {
    for (float iou : {0.0f, 0.3f, 0.9f}) {
      MulticlassNmsRotatedParams p;
      ASSERT_TRUE(MakeMulticlassNmsRotatedParams(iou, score_threshold, &p).ok());
      const auto cpu = Rows(iou, score_threshold, boxes, scores, batch, classes, n);
      for (int64_t budget : kRotatedBudgets) {
        ASSERT_EQ(testing::MulticlassNmsRotatedOnHost(p, boxes, scores, batch, classes, n, budget), cpu)
            << "score > " << score_threshold << ", iou " << iou << ", budget " << budget;
      }
    }
  }
}


// Half storage: the CPU kernels, serially and on 3 threads, and the device code keep exactly the
// float32 kernels' boxes (rows) on the half values, in their order, on a scene where rounding
// matters: scores packed near 0.5 (rounding ties most of them), centres past float16's 65,504 for
// some boxes (infinite there: inactive), the scene's degenerate and non-finite boxes; both rules,
// with and without categories, every budget path.
template <class T>
void ExpectHalfRotatedNms() {
  std::mt19937 rng(33);
  const int64_t n = 700;
  std::vector<float> boxes, scores;
  RotatedScene(&rng, n, &boxes, &scores);
  for (int64_t k = 0; k < n; ++k) {
    if (!std::isnan(scores[k])) scores[k] = 0.5f + scores[k] * 1e-3f;
    if (k % 97 == 5) boxes[5 * k] *= 1000.0f;
  }
  const std::vector<T> stored_boxes = testing::StoredAs<T>(boxes), stored_scores = testing::StoredAs<T>(scores);
  const std::vector<float> half_boxes = testing::FloatsOf(stored_boxes), half_scores = testing::FloatsOf(stored_scores);
  std::vector<int64_t> categories(n);
  for (int64_t k = 0; k < n; ++k) categories[k] = (k * 5) % 3;
  bool rounding_mattered = false;
  for (float threshold : {0.1f, 0.5f}) {
    for (const std::vector<int64_t>* cats : {static_cast<const std::vector<int64_t>*>(nullptr),
                                             static_cast<const std::vector<int64_t>*>(&categories)}) {
      const NmsRotatedParams p = Mmcv(threshold);
      const Keeps float32 = Keep(p, half_boxes, half_scores, cats);
      rounding_mattered |= float32 != Keep(p, boxes, scores, cats);
      for (int threads : {1, 3}) {
        std::vector<int64_t> keep(n);
        int64_t kept = -1;
        HeapScratchAllocator heap;
        ASSERT_TRUE(cpu::NmsRotated(p, stored_boxes.data(), stored_scores.data(), cats ? cats->data() : nullptr, n,
                                    keep.data(), &kept, heap, testing::ThreadedTaskRunner(threads)).ok());
        keep.resize(kept);
        ASSERT_EQ(keep, float32) << "threshold " << threshold << (cats ? ", categories" : "") << ", " << threads;
      }
      for (int64_t budget : kRotatedBudgets) {
        ASSERT_EQ(testing::NmsRotatedOnHost(p, stored_boxes, stored_scores, cats ? cats->data() : nullptr, budget),
                  float32)
            << "threshold " << threshold << (cats ? ", categories" : "") << ", budget " << budget;
      }
    }
  }
  EXPECT_TRUE(rounding_mattered);
  // mmdeploy's NMSRotated layout: [1, n, 5] boxes, [1, 2, n] scores (the packed ones, then the scene's
  // own multiples of 1/30, reversed), score threshold 0.5: half scores equal to it are left out.
  std::vector<float> class_scores(scores);
  std::vector<float> spread;
  RotatedScene(&rng, n, &boxes, &spread);  // (boxes grows; only its first n are used)
  class_scores.insert(class_scores.end(), spread.rbegin(), spread.rend());
  const std::vector<T> stored_class_scores = testing::StoredAs<T>(class_scores);
  MulticlassNmsRotatedParams mp;
  ASSERT_TRUE(MakeMulticlassNmsRotatedParams(0.3f, 0.5f, &mp).ok());
  const auto rows = Rows(0.3f, 0.5f, half_boxes, testing::FloatsOf(stored_class_scores), 1, 2, n);
  ASSERT_FALSE(rows.empty());
  for (int threads : {1, 3}) {
    std::vector<int32_t> kept(2 * n + 1);
    std::vector<int64_t> counts(3, -1);
    HeapScratchAllocator heap;
    ASSERT_TRUE(cpu::MulticlassNmsRotated(mp, stored_boxes.data(), stored_class_scores.data(), 1, 2, n, kept.data(),
                                          counts.data(), heap, testing::ThreadedTaskRunner(threads)).ok());
    std::vector<int64_t> got(3 * (counts[0] + counts[1]));
    cpu::WriteSelectedRows(kept.data(), counts.data(), 1, 2, n, got.data());
    ASSERT_EQ(got, rows) << threads << " threads";
  }
  for (int64_t budget : kRotatedBudgets) {
    ASSERT_EQ(testing::MulticlassNmsRotatedOnHost(mp, stored_boxes, stored_class_scores, 1, 2, n, budget), rows)
        << "budget " << budget;
  }
}

TEST(NmsRotatedHalfStorage, Float16KeepsTheFloat32KernelsBoxesOnTheHalfValues) {
  ExpectHalfRotatedNms<shared::Float16>();
}
TEST(NmsRotatedHalfStorage, BFloat16KeepsTheFloat32KernelsBoxesOnTheHalfValues) {
  ExpectHalfRotatedNms<shared::BFloat16>();
}

}  // namespace
}  // namespace opbridge
