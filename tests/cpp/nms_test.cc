// Axis-aligned NMS kernel tests: the score order, the greedy engine's grid against testing every
// pair, hand-worked cases and thread independence. The sweeps against torchvision are in
// tests/python/test_nms.py.
#include "kernels/cpu/nms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "half_values.h"
#include "kernels/cpu/greedy_nms.h"
#include "nms_device_code.h"
#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<int32_t> Order(const std::vector<float>& scores) {
  std::vector<int32_t> order(scores.size());
  std::vector<uint64_t> scratch(cpu::ScoreOrderScratchWords(static_cast<int64_t>(scores.size())));
  cpu::ScoreOrder(scores.data(), static_cast<int64_t>(scores.size()), order.data(), scratch.data());
  return order;
}

TEST(ScoreOrder, NaNFirstZerosTieAndTiesKeepPositions) {
  const std::vector<float> scores = {0.5f, kNaN, 0.9f, 0.5f, kNaN, -0.0f, 0.0f, 0.9f, -kInf, kInf};
  EXPECT_EQ(Order(scores), (std::vector<int32_t>{1, 4, 9, 2, 7, 0, 3, 5, 6, 8}));
}

TEST(ScoreOrder, RadixAndComparisonPathsMatchTheReference) {
  std::mt19937 rng(1);
  for (int count : {0, 1, 7, 255, 256, 257, 5000}) {
    std::vector<float> scores(count);
    for (auto& s : scores) {
      // Few distinct values, so that ties are common; some NaN, infinities and negative zeros.
      const int v = static_cast<int>(rng() % 40);
      s = v == 0 ? kNaN : v == 1 ? -0.0f : v == 2 ? kInf : v == 3 ? -kInf : static_cast<float>(v % 17) - 8.0f;
    }
    EXPECT_EQ(Order(scores), testing::TorchSortOrder(scores.data(), static_cast<int64_t>(scores.size()))) << count;
  }
}

// The classic greedy loop: every kept box tests every later unsuppressed box.
std::vector<uint8_t> ClassicGreedy(const cpu::TorchvisionIouRule& rule, int64_t n, std::vector<int32_t>* first) {
  std::vector<uint8_t> suppressed(n, 0), kept(n, 0);
  first->assign(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    if (suppressed[i]) continue;
    kept[i] = 1;
    for (int32_t j = i + 1; j < n; ++j) {
      if (!suppressed[j] && rule(i, j)) {
        suppressed[j] = 1;
        (*first)[j] = i;
      }
    }
  }
  return kept;
}

struct Boxes {
  std::vector<float> x1, y1, x2, y2, area, longer, extents;
  std::vector<uint8_t> active;
};

Boxes RandomBoxes(std::mt19937* rng, int64_t n, float spread, float offset) {
  std::uniform_real_distribution<float> pos(0.0f, spread), size(0.5f, 80.0f), unit(0.0f, 1.0f);
  Boxes b;
  for (int64_t k = 0; k < n; ++k) {
    const float x = pos(*rng), y = pos(*rng);
    float w = size(*rng), h = size(*rng);
    if (unit(*rng) < 0.05f) w = -w;  // a few inverted boxes
    b.x1.push_back(x);
    b.y1.push_back(y);
    b.x2.push_back(x + w);
    b.y2.push_back(y + h);
    const float bw = w + offset, bh = h + offset;
    b.area.push_back(bw * bh);
    b.longer.push_back(std::max(bw, bh));
    b.active.push_back(bw > 0 && bh > 0);
    b.extents.insert(b.extents.end(), {x, y, x + w + offset, y + h + offset});
  }
  return b;
}

TEST(GreedySuppress, GridFindsWhatTestingEveryPairFinds) {
  std::mt19937 rng(7);
  for (int64_t n : {10, 48, 200, 3000}) {
    for (float threshold : {0.0f, 0.3f, 0.5f, 0.9f}) {
      for (float offset : {0.0f, 1.0f}) {
        const Boxes b = RandomBoxes(&rng, n, 400.0f, offset);
        const cpu::TorchvisionIouRule rule{b.x1.data(), b.y1.data(), b.x2.data(), b.y2.data(), b.area.data(),
                                           offset, threshold};
        std::vector<int32_t> expected_first;
        const std::vector<uint8_t> expected = ClassicGreedy(rule, n, &expected_first);
        cpu::GreedyProblem p;
        p.count = n;
        p.extents = b.extents.data();
        p.active = b.active.data();
        p.sizes = b.longer.data();
        p.min_size_ratio = threshold * (1.0f - 1e-5f);
        p.min_overlap_fraction = threshold * (1.0f - 1e-3f);
        std::vector<uint64_t> scratch(cpu::GreedyScratchBytes(n) / 8 + 1);
        std::vector<uint8_t> kept(n);
        std::vector<int32_t> first(n);
        cpu::GreedySuppress(p, rule, kept.data(), nullptr, scratch.data());
        EXPECT_EQ(kept, expected) << n << " " << threshold << " " << offset;
        cpu::GreedySuppress(p, rule, kept.data(), first.data(), scratch.data());
        EXPECT_EQ(kept, expected) << n << " " << threshold << " " << offset;
        EXPECT_EQ(first, expected_first) << n << " " << threshold << " " << offset;
      }
    }
  }
}

TEST(GreedySuppress, StopsAtMaxKept) {
  const Boxes b = [] {
    std::mt19937 rng(3);
    return RandomBoxes(&rng, 500, 2000.0f, 0.0f);
  }();
  const cpu::TorchvisionIouRule rule{b.x1.data(), b.y1.data(), b.x2.data(), b.y2.data(), b.area.data(), 0.0f, 0.5f};
  cpu::GreedyProblem p;
  p.count = 500;
  p.extents = b.extents.data();
  p.active = b.active.data();
  p.max_kept = 7;
  std::vector<uint64_t> scratch(cpu::GreedyScratchBytes(500) / 8 + 1);
  std::vector<uint8_t> kept(500), all(500);
  EXPECT_EQ(cpu::GreedySuppress(p, rule, kept.data(), nullptr, scratch.data()), 7);
  p.max_kept = -1;
  cpu::GreedySuppress(p, rule, all.data(), nullptr, scratch.data());
  // The first seven kept without a limit, and nothing after them.
  int64_t seen = 0;
  for (int64_t k = 0; k < 500; ++k) {
    EXPECT_EQ(kept[k], seen < 7 ? all[k] : 0) << k;
    seen += all[k];
  }
}

struct NmsResult {
  std::vector<int64_t> keep;
  Status status;
};

// cpu::Nms on boxes and scores of T (float or half storage).
template <class T>
NmsResult RunNmsOf(const std::vector<T>& boxes, const std::vector<T>& scores, float threshold,
                   const std::vector<int64_t>* categories, int64_t offset, const TaskRunner& runner) {
  NmsParams p;
  EXPECT_TRUE(MakeNmsParams(threshold, offset, &p).ok());
  const int64_t n = static_cast<int64_t>(scores.size());
  NmsResult r{std::vector<int64_t>(n), Status::Ok()};
  int64_t kept = -1;
  HeapScratchAllocator heap;
  r.status = cpu::Nms(p, boxes.data(), scores.data(), categories ? categories->data() : nullptr, n, r.keep.data(),
                      &kept, heap, runner);
  r.keep.resize(std::max<int64_t>(kept, 0));
  return r;
}

NmsResult RunNms(const std::vector<float>& boxes, const std::vector<float>& scores, float threshold,
                 const std::vector<int64_t>* categories = nullptr, int64_t offset = 0,
                 const TaskRunner& runner = SerialTaskRunner()) {
  return RunNmsOf(boxes, scores, threshold, categories, offset, runner);
}

// The [rows, 3] rows of cpu::MulticlassNms on boxes and scores of T (float or half storage).
template <class T>
std::vector<int64_t> MulticlassRows(const MulticlassNmsParams& p, const std::vector<T>& boxes,
                                    const std::vector<T>& scores, int64_t batch, int64_t classes, int64_t n,
                                    const TaskRunner& runner) {
  const int64_t cap = cpu::MulticlassNmsCapacity(p, n);
  std::vector<int32_t> kept(batch * classes * std::max<int64_t>(cap, 1));
  std::vector<int64_t> counts(batch * classes);
  HeapScratchAllocator heap;
  EXPECT_TRUE(cpu::MulticlassNms(p, boxes.data(), scores.data(), batch, classes, n, kept.data(), counts.data(), heap,
                                 runner).ok());
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  std::vector<int64_t> rows(3 * total);
  cpu::WriteSelectedRows(kept.data(), counts.data(), batch, classes, cap, rows.data());
  return rows;
}

TEST(Nms, KeepsInScoreOrderAndSuppressesAboveTheThreshold) {
  // Box 1 covers the left half of box 0 (IoU 0.5); box 2 is apart.
  const std::vector<float> boxes = {0, 0, 2, 1, 0, 0, 1, 1, 5, 5, 6, 6};
  EXPECT_EQ(RunNms(boxes, {0.8f, 0.6f, 0.7f}, 0.49f).keep, (std::vector<int64_t>{0, 2}));
  // IoU exactly 0.5 is not > 0.5: kept.
  EXPECT_EQ(RunNms(boxes, {0.8f, 0.6f, 0.7f}, 0.5f).keep, (std::vector<int64_t>{0, 2, 1}));
}

TEST(Nms, TiesKeepTheLowerIndexFirstAndNaNScoresComeFirst) {
  const std::vector<float> boxes = {0, 0, 1, 1, 5, 5, 6, 6, 10, 10, 11, 11, 0, 0, 1, 1};
  EXPECT_EQ(RunNms(boxes, {0.5f, 0.5f, 0.5f, 0.5f}, 0.5f).keep, (std::vector<int64_t>{0, 1, 2}));
  // The NaN-scored box 3 is first and suppresses its twin, box 0 (as torchvision does).
  EXPECT_EQ(RunNms(boxes, {0.5f, 0.4f, 0.3f, kNaN}, 0.5f).keep, (std::vector<int64_t>{3, 1, 2}));
}

TEST(Nms, DegenerateBoxesAreKeptAndSuppressNothing) {
  // Twins of box 0 with a NaN or infinite coordinate, zero width, or inverted: each is kept, and
  // none suppresses the real twin scored below it (box 5).
  const std::vector<float> boxes = {0, 0, 4, 4, kNaN, 0, 4, 4, 0, 0, kInf, 4, 2, 0, 2, 4, 4, 0, 0, 4, 0, 0, 4, 4};
  EXPECT_EQ(RunNms(boxes, {0.1f, 0.9f, 0.8f, 0.7f, 0.6f, 0.5f}, 0.3f).keep, (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(Nms, OffsetAddsOneToWidthsAndHeights) {
  // Without offset the boxes touch (IoU 0); with mmcv's +1 they are 3 x 2 and share a 1 x 2
  // column: IoU 2 / (6 + 6 - 2) = 0.2.
  const std::vector<float> boxes = {0, 0, 2, 1, 2, 0, 4, 1};
  EXPECT_EQ(RunNms(boxes, {0.9f, 0.8f}, 0.0f, nullptr, 0).keep, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(RunNms(boxes, {0.9f, 0.8f}, 0.19f, nullptr, 1).keep, (std::vector<int64_t>{0}));
  EXPECT_EQ(RunNms(boxes, {0.9f, 0.8f}, 0.21f, nullptr, 1).keep, (std::vector<int64_t>{0, 1}));
}

TEST(Nms, CategoriesDoNotSuppressEachOther) {
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  const std::vector<int64_t> categories = {7, -3, 7};
  EXPECT_EQ(RunNms(boxes, {0.2f, 0.3f, 0.9f}, 0.5f, &categories).keep, (std::vector<int64_t>{2, 1}));
  // Sparse category values (not a dense range) take the sorting path.
  const std::vector<int64_t> sparse = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max()};
  EXPECT_EQ(RunNms(boxes, {0.2f, 0.3f, 0.9f}, 0.5f, &sparse).keep, (std::vector<int64_t>{2, 1}));
}

TEST(Nms, EmptyInput) {
  EXPECT_TRUE(RunNms({}, {}, 0.5f).keep.empty());
}

TEST(Nms, ResultsDoNotDependOnThreads) {
  std::mt19937 rng(11);
  const int64_t n = 20000;
  const Boxes b = RandomBoxes(&rng, n, 1000.0f, 0.0f);
  std::vector<float> boxes, scores(n);
  std::vector<int64_t> categories(n);
  for (int64_t k = 0; k < n; ++k) {
    boxes.insert(boxes.end(), {b.x1[k], b.y1[k], b.x2[k], b.y2[k]});
    scores[k] = static_cast<float>(rng() % 1000) / 1000.0f;
    categories[k] = static_cast<int64_t>(rng() % 90);
  }
  const NmsResult serial = RunNms(boxes, scores, 0.5f, &categories);
  const NmsResult threaded = RunNms(boxes, scores, 0.5f, &categories, 0, testing::ThreadedTaskRunner(3));
  ASSERT_TRUE(serial.status.ok() && threaded.status.ok());
  EXPECT_GT(serial.keep.size(), 1000u);
  EXPECT_EQ(serial.keep, threaded.keep);
}

TEST(MulticlassNms, PerBatchAndClassAboveTheScoreThresholdUpToTheLimit) {
  // Batch of 2, 3 boxes (0 and 1 overlap: IoU 0.5), 2 classes.
  const std::vector<float> boxes = {0, 0, 2, 1, 0, 0, 1, 1, 5, 5, 6, 6,  //
                                    0, 0, 1, 1, 5, 5, 6, 6, 9, 9, 10, 10};
  const std::vector<float> scores = {0.9f, 0.8f, 0.1f, /**/ 0.2f, 0.3f, 0.4f,  //
                                     kNaN, 0.5f, 0.5f, /**/ 0.05f, 0.6f, 0.7f};
  for (int64_t limit : {-1, 1}) {
    MulticlassNmsParams p;
    ASSERT_TRUE(MakeMulticlassNmsParams(0.4f, 0.1f, limit, &p).ok());
    const int64_t cap = cpu::MulticlassNmsCapacity(p, 3);
    std::vector<int32_t> kept(4 * cap);
    std::vector<int64_t> counts(4);
    HeapScratchAllocator heap;
    ASSERT_TRUE(cpu::MulticlassNms(p, boxes.data(), scores.data(), 2, 2, 3, kept.data(), counts.data(), heap,
                                   SerialTaskRunner()).ok());
    std::vector<int64_t> rows(3 * (counts[0] + counts[1] + counts[2] + counts[3]));
    cpu::WriteSelectedRows(kept.data(), counts.data(), 2, 2, cap, rows.data());
    // b0 c0: box 2 (0.1) is not > 0.1; box 0 suppresses box 1 (IoU 0.5). b0 c1: order 2, 1, 0;
    // box 1 suppresses box 0. b1 c0: the NaN score fails the threshold; boxes 1 and 2 tie (0.5),
    // the lower index first. b1 c1: 0.05 fails; box 2 (0.7), then box 1.
    const std::vector<int64_t> all = {0, 0, 0, 0, 1, 2, 0, 1, 1, 1, 0, 1, 1, 0, 2, 1, 1, 2, 1, 1, 1};
    const std::vector<int64_t> first = {0, 0, 0, 0, 1, 2, 1, 0, 1, 1, 1, 2};
    EXPECT_EQ(rows, limit < 0 ? all : first) << limit;
  }
}

TEST(NmsParams, RejectBadValuesAndShapes) {
  NmsParams p;
  EXPECT_NE(MakeNmsParams(1.5f, 0, &p).message().find("iou_threshold must lie in [0, 1], got 1.5"), std::string::npos);
  EXPECT_NE(MakeNmsParams(-0.1f, 0, &p).message().find("iou_threshold"), std::string::npos);
  EXPECT_NE(MakeNmsParams(kNaN, 0, &p).message().find("iou_threshold"), std::string::npos);
  MulticlassNmsParams m;
  EXPECT_NE(MakeMulticlassNmsParams(0.5f, kNaN, -1, &m).message().find("score_threshold must not be NaN"),
            std::string::npos);
  EXPECT_NE(MakeMulticlassNmsParams(0.5f, 0.f, -2, &m).message().find("max_output_boxes_per_class"), std::string::npos);
  EXPECT_NE(CheckNmsShapes({3, 5}, {3}, nullptr).message().find("[N, 4]"), std::string::npos);
  EXPECT_NE(CheckNmsShapes({3, 4}, {4}, nullptr).message().find("scores must have shape [N] with N = 3"),
            std::string::npos);
  const Shape idxs = {2};
  EXPECT_NE(CheckNmsShapes({3, 4}, {3}, &idxs).message().find("idxs"), std::string::npos);
  EXPECT_NE(CheckMulticlassNmsShapes({1, 3, 4}, {1, 2, 4}, 4).message().find("scores must have shape [B, C, N]"),
            std::string::npos);
  EXPECT_NE(CheckMulticlassNmsShapes({1, 3, 5}, {1, 2, 3}, 4).message().find("[B, N, 4]"), std::string::npos);
}

// ---- The CUDA kernels' code, run on the host ------------------------------------------------------
// The CUDA kernels sort with stable radix (and segmented) sorts of DescendingScoreKey, split the
// candidates into problems (a category, an image and class), and suppress each with the mask of its
// tile pairs, or band by band (against the earlier bands' kept boxes, then with the band's own mask)
// where the mask does not fit (kernels/shared/nms_tiles.h); nms_device_code.h runs those steps on the host, with the plan's
// budget that puts every problem on the mask path, none, or some. They must keep exactly the CPU
// kernels' boxes, in the CPU kernels' order: sparse scenes (hundreds kept, so that kept boxes of
// earlier tiles suppress), dense ones, tied and quantized scores, NaN, infinite and signed-zero
// scores, NaN, infinite and inverted boxes, both offsets, every threshold kind.
constexpr int64_t kBudgets[] = {shared::kNmsMaskBudgetWords, 0, 300, 6000};  // all, none, some

// n boxes [n, 4] and scores [n] with the awkward values above.
void AwkwardScene(std::mt19937* rng, int64_t n, float spread, std::vector<float>* boxes, std::vector<float>* scores) {
  std::uniform_real_distribution<float> pos(0.0f, spread), size(0.5f, 80.0f), unit(0.0f, 1.0f);
  boxes->clear();
  scores->clear();
  for (int64_t k = 0; k < n; ++k) {
    const float x = pos(*rng), y = pos(*rng);
    float w = size(*rng), h = size(*rng);
    const float u = unit(*rng);
    if (u < 0.03f) w = -w;           // inverted
    if (u > 0.99f) h = kNaN;         // a NaN box
    if (u > 0.985f && u <= 0.99f) w = kInf;
    boxes->insert(boxes->end(), {x, y, x + w, y + h});
    const float v = unit(*rng);
    float score = std::round(unit(*rng) * 50.0f) / 50.0f;  // many ties
    if (v < 0.02f) score = kNaN;
    if (v > 0.98f) score = v > 0.99f ? -0.0f : 0.0f;
    if (v > 0.97f && v <= 0.975f) score = -kInf;
    scores->push_back(score);
  }
}

// A multi-class layout's scene: boxes [batch, n, 4] (image 0 spread over 2,500 px, the others over
// 150) and scores [batch, classes, n], each image's and each class's from `scene`.
void MulticlassScene(void (*scene)(std::mt19937*, int64_t, float, std::vector<float>*, std::vector<float>*),
                     std::mt19937* rng, int64_t batch, int64_t classes, int64_t n, std::vector<float>* boxes,
                     std::vector<float>* scores) {
  std::vector<float> unused;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> image_boxes;
    scene(rng, n, b == 0 ? 2500.0f : 150.0f, &image_boxes, &unused);
    boxes->insert(boxes->end(), image_boxes.begin(), image_boxes.end());
    for (int64_t c = 0; c < classes; ++c) {
      std::vector<float> class_scores;
      scene(rng, n, 10.0f, &unused, &class_scores);
      scores->insert(scores->end(), class_scores.begin(), class_scores.end());
    }
  }
}

TEST(NmsDeviceCode, KeepsTheCpuKernelsBoxesInTheirOrder) {
  std::mt19937 rng(11);
  for (int64_t n : {0, 1, 7, 300, 1500}) {
    for (float spread : {100.0f, 3000.0f}) {
      std::vector<float> boxes, scores;
      AwkwardScene(&rng, n, spread, &boxes, &scores);
      std::vector<int64_t> categories(n);
      for (int64_t k = 0; k < n; ++k) categories[k] = (k * 7) % 3 - 1;  // -1, 0, 1
      for (float threshold : {0.0f, 0.3f, 0.5f, 1.0f}) {
        for (int64_t offset : {0, 1}) {
          for (const std::vector<int64_t>* cats : {static_cast<const std::vector<int64_t>*>(nullptr),
                                                   static_cast<const std::vector<int64_t>*>(&categories)}) {
            const NmsResult cpu = RunNms(boxes, scores, threshold, cats, offset);
            ASSERT_TRUE(cpu.status.ok());
            NmsParams p;
            ASSERT_TRUE(MakeNmsParams(threshold, offset, &p).ok());
            for (int64_t budget : kBudgets) {
              const auto device = testing::NmsOnHost(p, boxes, scores, cats ? cats->data() : nullptr, budget);
              ASSERT_EQ(device, cpu.keep) << n << " boxes, spread " << spread << ", threshold " << threshold
                                          << ", offset " << offset << (cats ? ", categories" : "") << ", budget "
                                          << budget;
            }
          }
        }
      }
    }
  }
}

// Scenes of several bands (kNmsBandRows candidates each) on the band path: the kept boxes of
// earlier bands suppress later candidates (sparse: thousands kept) or nearly all (dense), a cap that
// stops inside a band, categories of more than a band each.
TEST(NmsDeviceCode, TheBandPathKeepsTheCpuKernelsBoxesAcrossBands) {
  std::mt19937 rng(13);
  const int64_t n = 2 * shared::kNmsBandRows + 900;
  for (float spread : {20000.0f, 400.0f}) {
    std::vector<float> boxes, scores;
    AwkwardScene(&rng, n, spread, &boxes, &scores);
    std::vector<int64_t> categories(n);
    for (int64_t k = 0; k < n; ++k) categories[k] = k % 5 == 0 ? 7 : 3;  // 1,820 and 7,272 candidates
    for (float threshold : {0.0f, 0.5f}) {
      for (const std::vector<int64_t>* cats : {static_cast<const std::vector<int64_t>*>(nullptr),
                                               static_cast<const std::vector<int64_t>*>(&categories)}) {
        const NmsResult cpu = RunNms(boxes, scores, threshold, cats, 0);
        ASSERT_TRUE(cpu.status.ok());
        NmsParams p;
        ASSERT_TRUE(MakeNmsParams(threshold, 0, &p).ok());
        ASSERT_EQ(testing::NmsOnHost(p, boxes, scores, cats ? cats->data() : nullptr, 0), cpu.keep)
            << "spread " << spread << ", threshold " << threshold << (cats ? ", categories" : "");
        if (spread > 1000.0f && threshold > 0.0f && cats == nullptr) {
          EXPECT_GT(cpu.keep.size(), static_cast<size_t>(shared::kNmsBandRows));  // later bands meet many kept
        }
      }
    }
  }
}

// Both sides of the mask budget: 46,336 candidates alone in a call are the largest whose mask fits
// kNmsMaskBudgetWords (46,336 rows of 724 words), 46,337 the smallest that takes the band path
// (12 bands); then a category that large beside a small one (BatchedNms), which the plan puts on
// the band path after the small category's mask.
TEST(NmsDeviceCode, BothSidesOfTheMaskBudgetKeepTheCpuKernelsBoxes) {
  constexpr int64_t kLargestMasked = 46336;
  EXPECT_LE(shared::NmsMaskSize(kLargestMasked), shared::kNmsMaskBudgetWords);
  EXPECT_GT(shared::NmsMaskSize(kLargestMasked + 1), shared::kNmsMaskBudgetWords);
  std::mt19937 rng(14);
  std::vector<float> boxes, scores;
  AwkwardScene(&rng, kLargestMasked + 301, 30000.0f, &boxes, &scores);
  NmsParams p;
  ASSERT_TRUE(MakeNmsParams(0.5f, 0, &p).ok());
  for (int64_t n : {kLargestMasked, kLargestMasked + 1}) {
    const std::vector<float> some_boxes(boxes.begin(), boxes.begin() + 4 * n), some_scores(scores.begin(),
                                                                                           scores.begin() + n);
    std::vector<shared::NmsProblem> plan(1);
    plan[0].count = n;
    int64_t words = 0, pairs = 0;
    shared::PlanNmsProblems(plan.data(), 1, shared::kNmsMaskBudgetWords, &words, &pairs);
    EXPECT_EQ(plan[0].uses_mask, n == kLargestMasked ? 1 : 0) << n;
    const NmsResult cpu = RunNms(some_boxes, some_scores, 0.5f, nullptr, 0);
    ASSERT_TRUE(cpu.status.ok());
    ASSERT_EQ(testing::NmsOnHost(p, some_boxes, some_scores, nullptr), cpu.keep) << n << " candidates";
  }
  std::vector<int64_t> categories(boxes.size() / 4, 1);  // 46,337 in category 1
  for (int64_t k = 0; k < 300; ++k) categories[k * 100] = 0;  // and 300 in category 0, sorted first
  const NmsResult cpu = RunNms(boxes, scores, 0.5f, &categories, 0);
  ASSERT_TRUE(cpu.status.ok());
  ASSERT_EQ(testing::NmsOnHost(p, boxes, scores, categories.data()), cpu.keep) << "categories";
}

TEST(MulticlassNmsDeviceCode, KeepsTheCpuKernelsRows) {
  std::mt19937 rng(12);
  const int64_t batch = 2, classes = 3, n = 700;
  std::vector<float> boxes, scores;
  MulticlassScene(AwkwardScene, &rng, batch, classes, n, &boxes, &scores);
  for (float score_threshold : {-kInf, 0.0f, 0.5f}) {
    for (int64_t limit : {-1, 0, 1, 40, 300, 5000}) {
      for (float iou : {0.0f, 0.4f, 0.8f}) {
        MulticlassNmsParams p;
        ASSERT_TRUE(MakeMulticlassNmsParams(iou, score_threshold, limit, &p).ok());
        const std::vector<int64_t> rows = MulticlassRows(p, boxes, scores, batch, classes, n, SerialTaskRunner());
        for (int64_t budget : kBudgets) {
          ASSERT_EQ(testing::MulticlassNmsOnHost(p, boxes, scores, batch, classes, n, budget), rows)
              << "score > " << score_threshold << ", limit " << limit << ", iou " << iou << ", budget " << budget;
        }
      }
    }
  }
}

// Half storage. A scene whose rounding to half matters: scores packed near 0.5 (rounding ties many
// of them, which then go by index), coordinates past 65,504 (infinite in float16) with the wide
// spread, and boxes of subnormal size.
void HalfScene(std::mt19937* rng, int64_t n, float spread, std::vector<float>* boxes, std::vector<float>* scores) {
  AwkwardScene(rng, n, spread, boxes, scores);
  for (float& s : *scores) {
    if (std::isfinite(s)) s = 0.5f + s * 1e-3f;
  }
  for (int64_t k = 0; k < n; k += 37) {
    const float x = 3e-6f * static_cast<float>(k % 5);
    std::copy_n(std::vector<float>{x, x, x + 2e-6f, x + 3e-6f}.begin(), 4, boxes->begin() + 4 * k);
  }
}

// The CPU kernel, serial and threaded, and the device code keep exactly the float32 kernel's boxes
// on the half values, in its order: Nms and BatchedNms (both sort paths: the comparison sort below
// 2,048 candidates, the radix sort above), both offsets, the mask and band paths.
template <class T>
void CheckNmsHalfStorage() {
  std::mt19937 rng(31);
  int rounding_mattered = 0;  // cases where the half values keep other boxes than the unrounded ones
  for (int64_t n : {300, 3000}) {
    for (float spread : {100.0f, 3000.0f, 90000.0f}) {
      std::vector<float> boxes, scores;
      HalfScene(&rng, n, spread, &boxes, &scores);
      const std::vector<T> half_boxes = testing::StoredAs<T>(boxes), half_scores = testing::StoredAs<T>(scores);
      const std::vector<float> float_boxes = testing::FloatsOf(half_boxes), float_scores = testing::FloatsOf(half_scores);
      std::vector<int64_t> categories(n);
      for (int64_t k = 0; k < n; ++k) categories[k] = k % 4;
      for (float threshold : {0.3f, 0.7f}) {
        for (int64_t offset : {0, 1}) {
          for (const std::vector<int64_t>* cats : {static_cast<const std::vector<int64_t>*>(nullptr),
                                                   static_cast<const std::vector<int64_t>*>(&categories)}) {
            const NmsResult float32 = RunNms(float_boxes, float_scores, threshold, cats, offset);
            ASSERT_TRUE(float32.status.ok());
            rounding_mattered += RunNms(boxes, scores, threshold, cats, offset).keep != float32.keep;
            NmsParams p;
            ASSERT_TRUE(MakeNmsParams(threshold, offset, &p).ok());
            const int64_t* c = cats ? cats->data() : nullptr;
            for (bool threaded : {false, true}) {
              const testing::ThreadedTaskRunner three(3);
              const SerialTaskRunner serial;
              const TaskRunner& runner = threaded ? static_cast<const TaskRunner&>(three) : serial;
              const NmsResult half = RunNmsOf(half_boxes, half_scores, threshold, cats, offset, runner);
              ASSERT_TRUE(half.status.ok());
              ASSERT_EQ(half.keep, float32.keep) << n << " boxes, spread " << spread << ", threshold " << threshold
                                                 << ", offset " << offset << (cats ? ", categories" : "")
                                                 << (threaded ? ", threaded" : "");
            }
            for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}}) {
              ASSERT_EQ(testing::NmsOnHost(p, half_boxes, half_scores, c, budget), float32.keep)
                  << n << " boxes, spread " << spread << ", threshold " << threshold << ", offset " << offset
                  << (cats ? ", categories" : "") << ", budget " << budget;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(rounding_mattered, 0);
}

TEST(NmsHalfStorage, Float16KeepsTheFloat32KernelsBoxesOnTheHalfValues) { CheckNmsHalfStorage<shared::Float16>(); }

TEST(NmsHalfStorage, BFloat16KeepsTheFloat32KernelsBoxesOnTheHalfValues) { CheckNmsHalfStorage<shared::BFloat16>(); }

// MulticlassNms likewise: its score filter and the filter's blocks of 16 compare the half scores'
// floats (a threshold between two half values, one equal to a half value).
template <class T>
void CheckMulticlassNmsHalfStorage() {
  std::mt19937 rng(32);
  const int64_t batch = 2, classes = 3, n = 700;
  std::vector<float> boxes, scores;
  MulticlassScene(HalfScene, &rng, batch, classes, n, &boxes, &scores);
  const std::vector<T> half_boxes = testing::StoredAs<T>(boxes), half_scores = testing::StoredAs<T>(scores);
  const std::vector<float> float_boxes = testing::FloatsOf(half_boxes), float_scores = testing::FloatsOf(half_scores);
  const float on_a_half_value = float_scores[5];
  for (float score_threshold : {-kInf, 0.5f, 0.50012f, on_a_half_value}) {
    for (int64_t limit : {-1, 40}) {
      MulticlassNmsParams p;
      ASSERT_TRUE(MakeMulticlassNmsParams(0.5f, score_threshold, limit, &p).ok());
      const auto float32 = MulticlassRows(p, float_boxes, float_scores, batch, classes, n, SerialTaskRunner());
      ASSERT_EQ(MulticlassRows(p, half_boxes, half_scores, batch, classes, n, SerialTaskRunner()), float32)
          << "score > " << score_threshold << ", limit " << limit;
      ASSERT_EQ(MulticlassRows(p, half_boxes, half_scores, batch, classes, n, testing::ThreadedTaskRunner(3)), float32)
          << "score > " << score_threshold << ", limit " << limit << ", threaded";
      for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}}) {
        ASSERT_EQ(testing::MulticlassNmsOnHost(p, half_boxes, half_scores, batch, classes, n, budget), float32)
            << "score > " << score_threshold << ", limit " << limit << ", budget " << budget;
      }
    }
  }
}

TEST(MulticlassNmsHalfStorage, Float16KeepsTheFloat32KernelsRowsOnTheHalfValues) {
  CheckMulticlassNmsHalfStorage<shared::Float16>();
}

TEST(MulticlassNmsHalfStorage, BFloat16KeepsTheFloat32KernelsRowsOnTheHalfValues) {
  CheckMulticlassNmsHalfStorage<shared::BFloat16>();
}

TEST(NmsDeviceCode, ResolvesATileAsTheGreedyLoop) {
  // Candidates 0..4 of a tile: 0 suppresses 2, 1 suppresses 3 and 4, 3 suppresses 4; the earlier
  // tiles removed 1. Greedy: 0 kept, 1 removed, 2 suppressed by 0, 3 kept (1 is not kept), 4
  // suppressed by 3.
  const uint64_t diag[5] = {0b00100, 0b11000, 0, 0b10000, 0};
  EXPECT_EQ(shared::ResolveTileBits(0b00010, diag, 5, 64), 0b01001u);
  EXPECT_EQ(shared::ResolveTileBits(0b00010, diag, 5, 1), 0b00001u);  // the cap
  EXPECT_EQ(shared::ResolveTileBits(0, diag, 5, 64), 0b00011u);       // 1 kept: 3 and 4 go
  EXPECT_EQ(shared::ResolveTileBits(~uint64_t{0}, diag, 5, 64), 0u);
  EXPECT_EQ(shared::KeptRank(0b01001, 3), 1);
}

TEST(NmsDeviceCode, ThePlanPutsAPrefixOfTheProblemsOnTheMaskPath) {
  std::vector<shared::NmsProblem> problems(4);
  const int64_t counts[4] = {100, shared::kNmsMaxMaskRows + 1, 64, 200};  // masks of 200, 0 (too many), 64, 800
  for (int k = 0; k < 4; ++k) problems[k].count = counts[k];
  int64_t words = 0, pairs = 0;
  shared::PlanNmsProblems(problems.data(), 4, 300, &words, &pairs);
  EXPECT_EQ(problems[0].uses_mask, 1);
  EXPECT_EQ(problems[1].uses_mask, 0);
  EXPECT_EQ(problems[2].uses_mask, 1);
  EXPECT_EQ(problems[3].uses_mask, 0);  // 200 + 64 + 800 > 300
  EXPECT_EQ(problems[2].mask_begin, 200);
  EXPECT_EQ(problems[2].pair_begin, 4);  // problem 0: 2 x 2 pairs
  EXPECT_EQ(words, 264);
  EXPECT_EQ(pairs, 5);
}

}  // namespace
}  // namespace opbridge
