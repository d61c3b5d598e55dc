// TensorRT batched NMS kernel tests: hand-worked pipelines (threshold, background, topk, merge,
// padding, clipping, index layouts), the parameter rules and thread independence. The sweeps
// against the eager PyTorch reference are in tests/python/test_trt_batched_nms.py.
#include "kernels/cpu/trt_batched_nms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "half_values.h"
#include "nms_device_code.h"
#include "task_runners.h"

namespace opbridge {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Result {
  std::vector<float> dets;
  std::vector<int32_t> labels, index;
};

TrtBatchedNmsParams Params(int64_t num_classes, int64_t keep_topk, float iou, float score = 0.0f, int64_t topk = -1,
                           int64_t background = -1, int64_t clip = 0, bool rotated = false) {
  TrtBatchedNmsParams p;
  EXPECT_TRUE(MakeTrtBatchedNmsParams(background, num_classes, topk, keep_topk, score, iou, 0, clip, 1, rotated, &p).ok());
  return p;
}

// boxes [batch, n, loc_classes, box_size], scores [batch, n, classes].
Result Detect(const TrtBatchedNmsParams& p, const std::vector<float>& boxes, int64_t loc_classes,
           const std::vector<float>& scores, int64_t batch, int64_t n,
           const TaskRunner& runner = SerialTaskRunner()) {
  const int64_t classes = p.num_classes, keep = p.keep_topk;
  EXPECT_EQ(boxes.size(), static_cast<size_t>(batch * n * loc_classes * p.box_size()));
  EXPECT_EQ(scores.size(), static_cast<size_t>(batch * n * classes));
  // Outputs start as garbage: the kernel must write every element.
  Result r{std::vector<float>(batch * keep * (p.box_size() + 1), 7.0f), std::vector<int32_t>(batch * keep, 7),
           std::vector<int32_t>(batch * keep, 7)};
  HeapScratchAllocator heap;
  EXPECT_TRUE(cpu::TrtBatchedNms(p, boxes.data(), loc_classes, scores.data(), batch, n, classes, r.dets.data(),
                                 r.labels.data(), r.index.data(), heap, runner).ok());
  return r;
}

// Three boxes of one object (0, 1, 2) and one apart (3); two classes.
const std::vector<float> kBoxes = {0, 0, 10, 10, 1, 0, 11, 10, 0, 1, 10, 11, 50, 50, 60, 60};

TEST(TrtBatchedNms, PipelineHandWorked) {
  // Scores [4 boxes, 2 classes].
  const std::vector<float> scores = {0.9f, 0.1f, 0.8f, 0.7f, 0.3f, 0.6f, 0.5f, 0.05f};
  const auto r = Detect(Params(2, 6, 0.5f, 0.2f), kBoxes, 1, scores, 1, 4);
  // Class 0: candidates 0 (0.9), 1 (0.8), 3 (0.5), 2 (0.3); 0 suppresses 1 and 2 -> 0, 3.
  // Class 1: candidates 1 (0.7), 2 (0.6); 1 and 2 overlap by 81/119 -> 1.
  // Merge: 0.9 (c0, box 0), 0.7 (c1, box 1), 0.5 (c0, box 3), then empty rows.
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 1, 0, -1, -1, -1}));
  EXPECT_EQ(r.index, (std::vector<int32_t>{0, 1, 3, -1, -1, -1}));
  const std::vector<float> dets = {0, 0, 10, 10, 0.9f, 1, 0, 11, 10, 0.7f, 50, 50, 60, 60, 0.5f,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(r.dets, dets);
}

TEST(TrtBatchedNms, KeepTopkCutsTheMergeAndBackgroundIsSkipped) {
  const std::vector<float> scores = {0.9f, 0.1f, 0.8f, 0.7f, 0.3f, 0.6f, 0.5f, 0.05f};
  auto r = Detect(Params(2, 2, 0.5f, 0.2f), kBoxes, 1, scores, 1, 4);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 1}));
  // Class 0 as background: only class 1's detection.
  r = Detect(Params(2, 3, 0.5f, 0.2f, -1, 0), kBoxes, 1, scores, 1, 4);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{1, -1, -1}));
  EXPECT_EQ(r.index, (std::vector<int32_t>{1, -1, -1}));
  // A background_label_id beyond the classes skips nothing.
  r = Detect(Params(2, 3, 0.5f, 0.2f, -1, 5), kBoxes, 1, scores, 1, 4);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 1, 0}));
}

TEST(TrtBatchedNms, TopkLimitsTheCandidatesBeforeSuppression) {
  // One class, boxes 0..3 scoring 0.9, 0.8, 0.7, 0.6: box 3 is apart, but with topk 3 it never
  // takes part.
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f};
  EXPECT_EQ(Detect(Params(1, 4, 0.5f, 0.0f, 3), kBoxes, 1, scores, 1, 4).index, (std::vector<int32_t>{0, -1, -1, -1}));
  EXPECT_EQ(Detect(Params(1, 4, 0.5f, 0.0f, 4), kBoxes, 1, scores, 1, 4).index, (std::vector<int32_t>{0, 3, -1, -1}));
  // topk <= 0 or above S: all.
  for (int64_t topk : {0, -1, 5, 100}) {
    EXPECT_EQ(Detect(Params(1, 4, 0.5f, 0.0f, topk), kBoxes, 1, scores, 1, 4).index,
              (std::vector<int32_t>{0, 3, -1, -1}))
        << topk;
  }
}

TEST(TrtBatchedNms, SuppressionIsStrictAndScoresStrictlyAboveTheThreshold) {
  // Boxes 0 and 1: IoU 100 / 110 (inter 10 x 10, union 110).
  const std::vector<float> boxes = {0, 0, 10, 10, 0, 0, 11, 10};
  const float iou = 100.0f / 110.0f;
  const std::vector<float> scores = {0.9f, 0.5f};
  EXPECT_EQ(Detect(Params(1, 2, iou), boxes, 1, scores, 1, 2).index, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Detect(Params(1, 2, std::nextafter(iou, 0.0f)), boxes, 1, scores, 1, 2).index,
            (std::vector<int32_t>{0, -1}));
  EXPECT_EQ(Detect(Params(1, 2, 1.0f, 0.5f), boxes, 1, scores, 1, 2).index, (std::vector<int32_t>{0, -1}));
}

TEST(TrtBatchedNms, TouchingDisjointAndInvertedBoxesHaveIouZero) {
  // Box 0, a box touching it, an inverted copy of it, a zero-width box inside it.
  const std::vector<float> boxes = {0, 0, 10, 10, 10, 0, 20, 10, 10, 10, 0, 0, 5, 0, 5, 10};
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f};
  EXPECT_EQ(Detect(Params(1, 4, 0.0f), boxes, 1, scores, 1, 4).index, (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(TrtBatchedNms, TiesOrderByBoxThenClass) {
  // Four identical scores over two boxes far apart and two classes: class order first, box order
  // within a class.
  const std::vector<float> boxes = {0, 0, 1, 1, 5, 5, 6, 6};
  const std::vector<float> scores = {0.5f, 0.5f, 0.5f, 0.5f};
  const auto r = Detect(Params(2, 4, 0.5f), boxes, 1, scores, 1, 2);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(r.index, (std::vector<int32_t>{0, 1, 0, 1}));
}

TEST(TrtBatchedNms, PerClassBoxesAndTheirIndex) {
  // loc_classes = 2: box (s, c). Class 1's boxes are far from class 0's.
  const std::vector<float> boxes = {0, 0, 10, 10, 100, 100, 110, 110, 0, 0, 11, 10, 200, 200, 210, 210};
  const std::vector<float> scores = {0.9f, 0.4f, 0.8f, 0.3f};
  const auto r = Detect(Params(2, 4, 0.5f), boxes, 2, scores, 1, 2);
  // Class 0: box (0, 0) suppresses (1, 0). Class 1: (0, 1) and (1, 1) far apart: both kept.
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 1, 1, -1}));
  EXPECT_EQ(r.index, (std::vector<int32_t>{0, 2 + 0, 2 + 1, -1}));  // c * S + s
  EXPECT_EQ(std::vector<float>(r.dets.begin() + 5, r.dets.begin() + 10),
            (std::vector<float>{100, 100, 110, 110, 0.4f}));
}

TEST(TrtBatchedNms, ClipBoxesClampsTheBoxNotTheScore) {
  const std::vector<float> boxes = {-0.5f, 0.25f, 1.5f, kNaN};
  const std::vector<float> scores = {2.0f};
  const auto r = Detect(Params(1, 1, 0.5f, 0.0f, -1, -1, 1), boxes, 1, scores, 1, 1);
  EXPECT_EQ(r.dets, (std::vector<float>{0.0f, 0.25f, 1.0f, 1.0f, 2.0f}));
}

TEST(TrtBatchedNms, NanScoresAreNeverCandidatesAndRowsPadPastTheDetections) {
  const std::vector<float> scores = {kNaN, 0.1f, kNaN, 0.2f};
  const auto r = Detect(Params(1, 3, 0.5f), kBoxes, 1, scores, 1, 4);
  EXPECT_EQ(r.index, (std::vector<int32_t>{3, 1, -1}));
}

TEST(TrtBatchedNms, ImagesAreIndependent) {
  // Two images: the second has the first's boxes shifted, scores reversed.
  std::vector<float> boxes = kBoxes, scores = {0.9f, 0.8f, 0.7f, 0.6f};
  for (float v : kBoxes) boxes.push_back(v + 1000);
  scores.insert(scores.end(), {0.6f, 0.7f, 0.8f, 0.9f});
  const auto r = Detect(Params(1, 3, 0.5f), boxes, 1, scores, 2, 4);
  EXPECT_EQ(r.index, (std::vector<int32_t>{0, 3, -1, 3, 2, -1}));
  EXPECT_EQ(r.dets[15], 1050.0f);  // image 1's first row: box 3 shifted
}

TEST(TrtBatchedNms, RotatedBoxesUseTheRotatedIou) {
  // Two equal squares at 45 degrees with the same centre, one a bit larger; a third far away.
  const std::vector<float> boxes = {10, 10, 4, 4, 0.785398f, 10, 10, 4.4f, 4.4f, 0.785398f, 50, 50, 4, 4, 0.0f};
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f};
  const auto r = Detect(Params(1, 3, 0.5f, 0.0f, -1, -1, 0, true), boxes, 1, scores, 1, 3);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{0, 0, -1}));
  EXPECT_EQ(std::vector<float>(r.dets.begin() + 6, r.dets.begin() + 12), (std::vector<float>{50, 50, 4, 4, 0, 0.7f}));
  // IoU 16 / 19.36 = 0.826: above 0.9, both kept.
  EXPECT_EQ(Detect(Params(1, 3, 0.9f, 0.0f, -1, -1, 0, true), boxes, 1, scores, 1, 3).labels,
            (std::vector<int32_t>{0, 0, 0}));
}

TEST(TrtBatchedNms, EmptyInputsGiveEmptyRows) {
  const auto r = Detect(Params(3, 2, 0.5f), {}, 1, {}, 1, 0);
  EXPECT_EQ(r.labels, (std::vector<int32_t>{-1, -1}));
  EXPECT_EQ(r.dets, std::vector<float>(10, 0.0f));
  EXPECT_TRUE(Detect(Params(3, 0, 0.5f), kBoxes, 1, std::vector<float>(12, 0.5f), 1, 4).labels.empty());
}

TEST(TrtBatchedNms, ResultsDoNotDependOnTheThreadCount) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> position(0, 200), size(5, 40), score(0, 1);
  const int64_t batch = 2, n = 700, classes = 6;
  std::vector<float> boxes, scores;
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    const float x = position(rng), y = position(rng);
    boxes.insert(boxes.end(), {x, y, x + size(rng), y + size(rng)});
  }
  for (int64_t i = 0; i < batch * n * classes; ++i) scores.push_back(score(rng));
  for (int64_t loc : {int64_t{1}, classes}) {
    const std::vector<float> used(boxes.begin(), boxes.begin() + batch * n * loc * 4);
    const auto p = Params(classes, 300, 0.5f, 0.1f, 400);
    const auto serial = Detect(p, used, loc, scores, batch, n);
    for (int threads : {2, 5}) {
      const auto threaded = Detect(p, used, loc, scores, batch, n, testing::ThreadedTaskRunner(threads));
      EXPECT_EQ(threaded.dets, serial.dets) << loc << " " << threads;
      EXPECT_EQ(threaded.labels, serial.labels);
      EXPECT_EQ(threaded.index, serial.index);
    }
  }
}

TEST(TrtBatchedNms, ParameterRules) {
  TrtBatchedNmsParams p;
  auto error = [&](int64_t background, int64_t classes, int64_t keep, float score, float iou, int64_t normalized,
                   int64_t clip, int64_t index) {
    const Status s = MakeTrtBatchedNmsParams(background, classes, 0, keep, score, iou, normalized, clip, index, false, &p);
    return s.ok() ? std::string() : s.message();
  };
  EXPECT_EQ(error(-1, 1, 0, 0.0f, 0.5f, 0, 0, 0), "");
  EXPECT_EQ(error(-1, 0, 1, 0.0f, 0.5f, 0, 0, 0), "num_classes must be >= 1, got 0");
  EXPECT_EQ(error(-2, 1, 1, 0.0f, 0.5f, 0, 0, 0), "background_label_id must be -1 (none) or a class, got -2");
  EXPECT_EQ(error(-1, 1, -1, 0.0f, 0.5f, 0, 0, 0), "keep_topk must lie in [0, 2147483647] (detections per image), got -1");
  EXPECT_EQ(error(-1, 1, int64_t{1} << 31, 0.0f, 0.5f, 0, 0, 0),
            "keep_topk must lie in [0, 2147483647] (detections per image), got 2147483648");
  EXPECT_NE(error(-1, 1, 1, kNaN, 0.5f, 0, 0, 0).find("score_threshold"), std::string::npos);
  EXPECT_NE(error(-1, 1, 1, 0.0f, 1.5f, 0, 0, 0).find("iou_threshold"), std::string::npos);
}

TEST(TrtBatchedNms, ShapeRules) {
  const auto p = Params(3, 10, 0.5f);
  auto error = [&](const Shape& boxes, const Shape& scores) {
    const Status s = CheckTrtBatchedNmsShapes(p, boxes, scores);
    return s.ok() ? std::string() : s.message();
  };
  EXPECT_EQ(error({2, 5, 1, 4}, {2, 5, 3}), "");
  EXPECT_EQ(error({2, 5, 3, 4}, {2, 5, 3}), "");
  EXPECT_EQ(error({2, 5, 4}, {2, 5, 3}),
            "boxes must have shape [B, S, 1 or C, 4] (x1, y1, x2, y2), got shape [2, 5, 4]");
  EXPECT_EQ(error({2, 5, 2, 4}, {2, 5, 3}),
            "boxes' third dimension must be 1 (boxes shared by all classes) or 3 (num_classes, a box per class), got 2");
  EXPECT_EQ(error({2, 5, 1, 4}, {2, 5, 4}),
            "scores must have shape [B, S, C] with B = 2, S = 5 (as boxes) and C = 3 (num_classes), got shape [2, 5, 4]");
  EXPECT_EQ(error({2, 5, 1, 4}, {1, 5, 3}),
            "scores must have shape [B, S, C] with B = 2, S = 5 (as boxes) and C = 3 (num_classes), got shape [1, 5, 3]");
  const int64_t s = (int64_t{1} << 31) / 3 + 1;
  EXPECT_EQ(error({1, s, 1, 4}, {1, s, 3}), "");
  EXPECT_EQ(error({1, s, 3, 4}, {1, s, 3}),
            "with a box per class, num_classes * S must be at most 2147483647 (the index output is int32), got 3 * " +
                std::to_string(s));
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// The CUDA kernel's steps (nms_device_code.h: candidates, segmented sorts, mask or band paths, the
// merge; with every problem on the mask path, none, and some) must write the
// CPU kernel's outputs element for element: shared and per-class boxes, topk cuts, keep_topk cuts
// of the merge, the background class, clipping, NaN scores and ties.
TEST(TrtBatchedNmsDeviceCode, WritesTheCpuKernelsOutputs) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> position(-0.2f, 1.0f), size(0.02f, 0.3f), unit(0, 1);
  const int64_t batch = 2, n = 600, classes = 5;
  std::vector<float> boxes, scores;
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    const float x = position(rng), y = position(rng);
    boxes.insert(boxes.end(), {x, y, x + size(rng), y + size(rng)});
  }
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    const float u = unit(rng);
    scores.push_back(u < 0.02f ? kNaN : std::round(unit(rng) * 40.0f) / 40.0f);  // NaN and ties
  }
  for (int64_t loc : {int64_t{1}, classes}) {
    const std::vector<float> used(boxes.begin(), boxes.begin() + batch * n * loc * 4);
    for (int64_t keep : {1, 50, 700}) {
      for (int64_t topk : {-1, 30, 400}) {
        for (int64_t background : {-1, 2}) {
          for (int64_t clip : {0, 1}) {
            const auto p = Params(classes, keep, 0.45f, 0.3f, topk, background, clip);
            const auto cpu = Detect(p, used, loc, scores, batch, n);
            for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}, int64_t{3000}}) {
              const auto device = testing::TrtBatchedNmsOnHost(p, used, loc, scores, batch, n, classes, budget);
              const std::string where = "loc " + std::to_string(loc) + ", keep_topk " + std::to_string(keep) +
                                        ", topk " + std::to_string(topk) + ", background " +
                                        std::to_string(background) + ", clip " + std::to_string(clip) + ", budget " +
                                        std::to_string(budget);
              ASSERT_EQ(device.dets, cpu.dets) << where;
              ASSERT_EQ(device.labels, cpu.labels) << where;
              ASSERT_EQ(device.index, cpu.index) << where;
            }
          }
        }
      }
    }
  }
}

// The rotated plugin (IoU > threshold with mmcv's rotated IoU and its guard): the CUDA kernels'
// pipeline run on the host writes the CPU kernel's outputs, boxes shared and per class.
TEST(TrtBatchedNmsDeviceCode, WritesTheCpuKernelsRotatedOutputs) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> centre(0.0f, 60.0f), side(1.0f, 25.0f), angle(-3.2f, 3.2f), unit(0, 1);
  const int64_t batch = 2, n = 250, classes = 4;
  std::vector<float> boxes, scores;
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    boxes.insert(boxes.end(), {centre(rng), centre(rng), side(rng), side(rng), angle(rng)});
  }
  boxes[5 * 7 + 2] = 0.0f;  // a degenerate box
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    const float u = unit(rng);
    scores.push_back(u < 0.02f ? kNaN : std::round(unit(rng) * 40.0f) / 40.0f);
  }
  for (int64_t loc : {int64_t{1}, classes}) {
    const std::vector<float> used(boxes.begin(), boxes.begin() + batch * n * loc * 5);
    for (int64_t keep : {1, 60, 400}) {
      for (int64_t topk : {-1, 40}) {
        const auto p = Params(classes, keep, 0.3f, 0.2f, topk, -1, 0, true);
        const auto cpu = Detect(p, used, loc, scores, batch, n);
        for (int64_t budget : {shared::kNmsMaskBudgetWords, int64_t{0}, int64_t{2000}}) {
          const auto device = testing::TrtBatchedNmsOnHost(p, used, loc, scores, batch, n, classes, budget);
          const std::string where = "loc " + std::to_string(loc) + ", keep_topk " + std::to_string(keep) + ", topk " +
                                    std::to_string(topk) + ", budget " + std::to_string(budget);
          ASSERT_EQ(device.dets, cpu.dets) << where;
          ASSERT_EQ(device.labels, cpu.labels) << where;
          ASSERT_EQ(device.index, cpu.index) << where;
        }
      }
    }
  }
}


// Half storage: the CPU kernel, serially and on 3 threads, and the device code write exactly the
// float32 kernel's outputs on the half values (dets stored as T: each value as it was read, or the
// clip's 0 and 1), axis-aligned and rotated, boxes shared and per class, with scores packed near 0.5
// (rounding ties them) and a score threshold at a half value.
template <class T>
void ExpectHalfTrtBatchedNms(bool rotated) {
  std::mt19937 rng(rotated ? 8 : 7);
  std::uniform_real_distribution<float> position(-0.2f, 1.0f), size(0.02f, 0.3f), angle(-3.2f, 3.2f), unit(0, 1);
  const int64_t batch = 2, n = 300, classes = 4, box_size = rotated ? 5 : 4;
  std::vector<float> boxes, scores;
  for (int64_t i = 0; i < batch * n * classes; ++i) {
    const float x = position(rng), y = position(rng);
    if (rotated) {
      boxes.insert(boxes.end(), {x, y, size(rng), size(rng), angle(rng)});
    } else {
      boxes.insert(boxes.end(), {x, y, x + size(rng), y + size(rng)});
    }
  }
  for (int64_t i = 0; i < batch * n * classes; ++i) scores.push_back(i % 2 ? unit(rng) : 0.5f + unit(rng) * 1e-3f);
  const std::vector<T> stored_boxes = testing::StoredAs<T>(boxes), stored_scores = testing::StoredAs<T>(scores);
  const std::vector<float> half_boxes = testing::FloatsOf(stored_boxes), half_scores = testing::FloatsOf(stored_scores);
  for (int64_t loc : {int64_t{1}, classes}) {
    const int64_t used = batch * n * loc * box_size;
    const std::vector<T> boxes_t(stored_boxes.begin(), stored_boxes.begin() + used);
    const std::vector<float> boxes_f(half_boxes.begin(), half_boxes.begin() + used);
    for (int64_t keep : {50, 700}) {
      for (int64_t clip : {0, 1}) {
        const auto p = Params(classes, keep, 0.45f, 0.5f, -1, -1, clip, rotated);
        const Result float32 = Detect(p, boxes_f, loc, half_scores, batch, n);
        const std::string where = "loc " + std::to_string(loc) + ", keep_topk " + std::to_string(keep) + ", clip " +
                                  std::to_string(clip);
        std::vector<std::vector<T>> dets;
        for (int threads : {1, 3}) {
          std::vector<T> d(batch * keep * (box_size + 1));
          std::vector<int32_t> labels(batch * keep, 7), index(batch * keep, 7);
          HeapScratchAllocator heap;
          ASSERT_TRUE(cpu::TrtBatchedNms(p, boxes_t.data(), loc, stored_scores.data(), batch, n, classes, d.data(),
                                         labels.data(), index.data(), heap, testing::ThreadedTaskRunner(threads)).ok());
          ASSERT_EQ(labels, float32.labels) << where;
          ASSERT_EQ(index, float32.index) << where;
          dets.push_back(d);
        }
        const auto device = testing::TrtBatchedNmsOnHost(p, boxes_t, loc, stored_scores, batch, n, classes);
        ASSERT_EQ(device.labels, float32.labels) << where;
        ASSERT_EQ(device.index, float32.index) << where;
        testing::ExpectFloat32RoundedOnce(dets[0], float32.dets, {&dets[1], &device.dets}, where);
      }
    }
  }
}

TEST(TrtBatchedNmsHalfStorage, Float16WritesTheFloat32KernelsOutputsOnTheHalfValues) {
  ExpectHalfTrtBatchedNms<shared::Float16>(false);
  ExpectHalfTrtBatchedNms<shared::Float16>(true);
}
TEST(TrtBatchedNmsHalfStorage, BFloat16WritesTheFloat32KernelsOutputsOnTheHalfValues) {
  ExpectHalfTrtBatchedNms<shared::BFloat16>(false);
  ExpectHalfTrtBatchedNms<shared::BFloat16>(true);
}

}  // namespace
}  // namespace opbridge
