// Soft-NMS kernel tests against hand-worked cases. The sweeps against a float reference
// written from the spec are in tests/python/test_soft_nms.py.
#include "kernels/cpu/soft_nms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/shared/soft_nms_steps.h"

namespace opbridge {
namespace {

struct Result {
  std::vector<float> dets;
  std::vector<int64_t> inds;
};

Result RunSoftNms(const SoftNmsParams& p, const std::vector<float>& boxes, const std::vector<float>& scores) {
  const int64_t n = static_cast<int64_t>(scores.size());
  Result r{std::vector<float>(n * 5), std::vector<int64_t>(n)};
  int64_t kept = -1;
  std::vector<int64_t> scratch(cpu::SoftNmsScratchBytes(n) / sizeof(int64_t) + 1);
  cpu::SoftNms(p, boxes.data(), scores.data(), n, scratch.data(), r.dets.data(), r.inds.data(), &kept);
  r.dets.resize(kept * 5);
  r.inds.resize(kept);
  return r;
}

SoftNmsParams Params(int method, float iou = 0.3f) {
  SoftNmsParams p;
  EXPECT_TRUE(MakeSoftNmsParams(iou, 0.5f, 1e-3f, method, 0, &p).ok());
  return p;
}

TEST(SoftNms, DisjointBoxesAreAllKeptInScoreOrder) {
  const auto r = RunSoftNms(Params(1), {0, 0, 1, 1, 5, 5, 6, 6, 10, 10, 11, 11}, {0.2f, 0.9f, 0.5f});
  EXPECT_EQ(r.inds, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_FLOAT_EQ(r.dets[4], 0.9f);
  EXPECT_FLOAT_EQ(r.dets[9], 0.5f);
  EXPECT_FLOAT_EQ(r.dets[14], 0.2f);
}

TEST(SoftNms, NaiveDropsOverlapsLinearDecaysThem) {
  // Box 1 covers the left half of box 0: IoU = 0.5.
  const std::vector<float> boxes = {0, 0, 2, 1, 0, 0, 1, 1};
  const std::vector<float> scores = {0.8f, 0.6f};
  EXPECT_EQ(RunSoftNms(Params(0), boxes, scores).inds, (std::vector<int64_t>{0}));
  const auto linear = RunSoftNms(Params(1), boxes, scores);
  ASSERT_EQ(linear.inds, (std::vector<int64_t>{0, 1}));
  EXPECT_FLOAT_EQ(linear.dets[9], 0.6f * 0.5f);
  const auto gaussian = RunSoftNms(Params(2), boxes, scores);
  EXPECT_FLOAT_EQ(gaussian.dets[9], 0.6f * std::exp(-0.25f / 0.5f));
}

TEST(SoftNms, AllScoresBelowMinScoreStillKeepOne) {
  const auto r = RunSoftNms(Params(1), {0, 0, 1, 1, 5, 5, 6, 6}, {1e-4f, 2e-4f});
  EXPECT_EQ(r.inds, (std::vector<int64_t>{1}));
}

TEST(SoftNms, TiesPickTheFirstBox) {
  const auto r = RunSoftNms(Params(1), {0, 0, 1, 1, 5, 5, 6, 6, 10, 10, 11, 11}, {0.5f, 0.5f, 0.5f});
  EXPECT_EQ(r.inds, (std::vector<int64_t>{0, 1, 2}));
}

TEST(SoftNms, EmptyInput) {
  EXPECT_TRUE(RunSoftNms(Params(2), {}, {}).inds.empty());
}

TEST(SoftNms, RejectsBadParamsAndShapes) {
  SoftNmsParams p;
  EXPECT_NE(MakeSoftNmsParams(0.3f, 0.0f, 0.0f, 2, 0, &p).message().find("sigma"), std::string::npos);
  EXPECT_NE(CheckSoftNmsShapes({3, 5}, {3}).message().find("[N, 4]"), std::string::npos);
  EXPECT_NE(CheckSoftNmsShapes({3, 4}, {4}).message().find("scores"), std::string::npos);
}

// The ORT glue places the int64 indices right after the kernel's scratch: for an odd box count
// (36 bytes a box) they were stored at a misaligned address (undefined behaviour, issue 11).
TEST(SoftNms, ScratchSizeKeepsWhatFollowsAligned) {
  for (int64_t n : {0, 1, 2, 3, 5, 7, 1001}) {
    EXPECT_EQ(cpu::SoftNmsScratchBytes(n) % alignof(int64_t), 0u) << n;
    EXPECT_GE(cpu::SoftNmsScratchBytes(n), static_cast<size_t>(n) * 36) << n;
  }
}

// The gaussian weight's exp, evaluated in double and rounded once, is the float nearest e^x: it
// equals the double-precision std::exp rounded to float at every 61st float of [-104, 0] (2^24 of
// them) and at the edges (the underflow to 0 near -103.97, -0, -inf, NaN).
TEST(SoftNmsExp, IsTheFloatNearestToExp) {
  const auto nearest = [](float x) { return static_cast<float>(std::exp(static_cast<double>(x))); };
  int64_t checked = 0, differ = 0;
  float first_bad = 0.0f;
  for (uint32_t bits = 0x80000000u; bits <= 0xC2D00000u; bits += 61) {  // -0 to -104
    float x;
    std::memcpy(&x, &bits, sizeof x);
    ++checked;
    if (shared::ExpRoundedOnce(x) != nearest(x)) {
      if (differ++ == 0) first_bad = x;
    }
  }
  EXPECT_EQ(differ, 0) << "of " << checked << ", first at x = " << first_bad;
  for (float x : {-103.97f, -103.972f, -103.975f, -103.3f, -87.4f, -0.5f, -1e-8f, -1e-30f, 0.0f, 1.0f, 88.0f}) {
    EXPECT_EQ(shared::ExpRoundedOnce(x), nearest(x)) << x;
  }
  EXPECT_EQ(shared::ExpRoundedOnce(-0.0f), 1.0f);
  EXPECT_EQ(shared::ExpRoundedOnce(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(shared::ExpRoundedOnce(-1000.0f), 0.0f);
  EXPECT_TRUE(std::isnan(shared::ExpRoundedOnce(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(shared::ExpRoundedOnce(100.0f), std::numeric_limits<float>::infinity());
}

// The CUDA kernel (kernels/cuda/soft_nms.cu) on the host, phase by phase, with `threads` threads:
// each step's decay over contiguous runs (the thread whose run holds the pick's position decays the
// box from position i in its place), the drops ahead of each run, the holes by rank, the survivors
// beyond moved into them and the next pick as the largest key. Threads of a phase touch disjoint
// positions (or only read ones nobody writes), so running them one after another is the parallel run.
Result RunSoftNmsDeviceCode(const SoftNmsParams& p, const std::vector<float>& boxes,
                            const std::vector<float>& scores, int32_t threads) {
  const int32_t n = static_cast<int32_t>(scores.size());
  std::vector<float> x1(n), y1(n), x2(n), y2(n), score(n), area(n);
  std::vector<int32_t> index(n), holes(n);
  const shared::SoftNmsBoxes<int32_t> b{x1.data(), y1.data(), x2.data(), y2.data(), score.data(), area.data(),
                                        index.data()};
  const float offset = static_cast<float>(p.offset);
  for (int32_t k = 0; k < n; ++k) b.Load(k, boxes.data(), scores.data(), offset);
  uint64_t key = 0;
  for (int32_t k = 0; k < n; ++k) key = std::max(key, shared::SoftNmsPickKey(score[k], k, 0));
  int32_t best = static_cast<int32_t>(shared::SoftNmsPickPosition(key));
  Result r;
  int32_t end = n;
  for (int32_t i = 0; i < end; ++i) {
    const float bx1 = x1[best], by1 = y1[best], bx2 = x2[best], by2 = y2[best], barea = area[best];
    r.dets.insert(r.dets.end(), {bx1, by1, bx2, by2, score[best]});
    r.inds.push_back(index[best]);
    std::fill(holes.begin(), holes.end(), -1);  // a wrong rank reads no earlier step's hole
    std::vector<int32_t> first(threads), last(threads), drops(threads, 0);
    float moved_score = 0.0f;
    for (int32_t t = 0; t < threads; ++t) {
      shared::SoftNmsThreadRange(i + 1, end, t, threads, &first[t], &last[t]);
      for (int32_t k = first[t]; k < last[t]; ++k) {
        const int32_t from = k == best ? i : k;
        const float iou = shared::SoftNmsIou(bx1, by1, bx2, by2, barea, x1[from], y1[from], x2[from], y2[from],
                                             area[from], offset);
        const float decayed = shared::SoftNmsDecay(p, score[from], iou);
        if (k == best) {
          moved_score = decayed;
        } else {
          score[k] = decayed;
        }
        drops[t] += decayed < p.min_score ? 1 : 0;
      }
    }
    std::vector<int32_t> before(threads);
    int32_t all_drops = 0;
    for (int32_t t = 0; t < threads; ++t) {
      before[t] = all_drops;
      all_drops += drops[t];
    }
    if (best != i) {
      b.Move(best, i);
      score[best] = moved_score;
    }
    const int32_t region_end = end - all_drops;
    key = 0;
    for (int32_t t = 0; t < threads; ++t) {
      for (int32_t k = first[t]; k < std::min(last[t], region_end); ++k) {
        if (score[k] < p.min_score) {
          holes[before[t]++] = k;
        } else {
          key = std::max(key, shared::SoftNmsPickKey(score[k], k, i + 1));
        }
      }
    }
    for (int32_t t = 0; t < threads && all_drops > 0; ++t) {
      for (int32_t k = std::max(first[t], region_end); k < last[t]; ++k) {
        const float s = score[k];
        if (s < p.min_score) {
          ++before[t];
          continue;
        }
        const int32_t to = holes.at(shared::SoftNmsMoverRank(k, end, all_drops, before[t]));
        if (to < i + 1) {
          ADD_FAILURE() << "the survivor at " << k << " moved to no hole";
          return r;
        }
        b.Move(to, k);
        key = std::max(key, shared::SoftNmsPickKey(s, to, i + 1));
      }
    }
    best = static_cast<int32_t>(shared::SoftNmsPickPosition(key));
    end = region_end;
  }
  return r;
}

// Box k of `boxes` ([n, 4], x1 y1 x2 y2) centred at (cx, cy), w wide and h high.
void PutBox(std::vector<float>* boxes, int32_t k, float cx, float cy, float w, float h) {
  (*boxes)[4 * k] = cx - w / 2;
  (*boxes)[4 * k + 1] = cy - h / 2;
  (*boxes)[4 * k + 2] = cx + w / 2;
  (*boxes)[4 * k + 3] = cy + h / 2;
}

// Inputs that exercise every rule: clustered boxes (many overlaps, many drops a step), ties of
// scores (the first position must win, including across -0 and +0), NaN scores (first or not),
// degenerate boxes (zero and negative areas: NaN and inf IoUs) and repeated boxes.
std::vector<std::pair<std::vector<float>, std::vector<float>>> DeviceCodeInputs() {
  std::vector<std::pair<std::vector<float>, std::vector<float>>> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int32_t count : {1, 2, 3, 7, 33, 100, 300, 1000}) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> boxes(4 * count), scores(count);
      const int32_t clusters = std::max(1, count / 8);
      for (int32_t k = 0; k < count; ++k) {
        const int32_t c = k % clusters;
        const float cx = 37.0f * static_cast<float>(c % 13) + 5.0f * unit(rng);
        const float cy = 41.0f * static_cast<float>(c / 13) + 5.0f * unit(rng);
        const float w = 20.0f + 30.0f * unit(rng), h = 20.0f + 30.0f * unit(rng);
        PutBox(&boxes, k, cx, cy, w, h);
        scores[k] = unit(rng);
      }
      if (variant == 1) {  // few distinct scores: ties everywhere, -0 among them
        for (int32_t k = 0; k < count; ++k) scores[k] = static_cast<float>(k % 3) * 0.25f;
        for (int32_t k = 0; k < count; k += 5) scores[k] = -0.0f;
      } else if (variant == 2) {  // NaN scores, one of them first; degenerate and repeated boxes
        for (int32_t k = 0; k < count; k += 4) scores[k] = std::numeric_limits<float>::quiet_NaN();
        for (int32_t k = 1; k < count; k += 6) boxes[4 * k + 2] = boxes[4 * k];       // zero width
        for (int32_t k = 2; k < count; k += 9) boxes[4 * k + 3] = boxes[4 * k + 1] - 3;  // negative height
        for (int32_t k = 3; k < count; k += 7) std::copy_n(&boxes[0], 4, &boxes[4 * k]);
      } else if (variant == 3) {  // one box over all: many drops at once
        boxes[0] = -1000.0f;
        boxes[1] = -1000.0f;
        boxes[2] = 1000.0f;
        boxes[3] = 1000.0f;
        scores[0] = 2.0f;
      }
      inputs.emplace_back(boxes, scores);
    }
  }
  return inputs;
}

// The GPU's kept boxes, decayed scores and indices are the CPU kernel's, bit for bit, for every
// method, offset and a range of thresholds (min_score 0: nothing drops; 0.5: most boxes drop), with
// 1, 3, 32 and 512 threads (the kernel's).
TEST(SoftNmsDeviceCode, KeepsTheCpuKernelsBoxesScoresAndOrder) {
  const auto inputs = DeviceCodeInputs();
  int64_t compared = 0;
  for (int method : {0, 1, 2}) {
    for (int offset : {0, 1}) {
      for (const auto& [iou, min_score] : {std::pair{0.3f, 1e-3f}, std::pair{0.0f, 0.0f}, std::pair{0.6f, 0.5f}}) {
        SoftNmsParams p;
        ASSERT_TRUE(MakeSoftNmsParams(iou, 0.5f, min_score, method, offset, &p).ok());
        for (const auto& [boxes, scores] : inputs) {
          const Result cpu = RunSoftNms(p, boxes, scores);
          for (int32_t threads : {1, 3, 32, 512}) {
            const Result device = RunSoftNmsDeviceCode(p, boxes, scores, threads);
            ASSERT_EQ(device.inds, cpu.inds) << "method " << method << " offset " << offset << " iou " << iou
                                             << " min_score " << min_score << " boxes " << scores.size()
                                             << " threads " << threads;
            ASSERT_EQ(device.dets.size(), cpu.dets.size());
            EXPECT_EQ(0, std::memcmp(device.dets.data(), cpu.dets.data(), cpu.dets.size() * sizeof(float)));
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 3 * 2 * 3 * static_cast<int64_t>(inputs.size()) * 4);
}

// At the bench's size (5,000 boxes around 500 centres: runs of up to 11 positions a thread, ~1,500
// picks and ~3,500 drops), with the kernel's 512 threads.
TEST(SoftNmsDeviceCode, KeepsTheCpuKernelsResultsAtTheBenchSize) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int32_t count = 5000;
  std::vector<float> boxes(4 * count), scores(count);
  for (int32_t k = 0; k < count; ++k) {
    const int32_t c = k % 500;
    const float cx = 1216.0f * static_cast<float>((c * 37) % 500) / 500.0f + 10.0f * unit(rng);
    const float cy = 800.0f * static_cast<float>((c * 91) % 500) / 500.0f + 10.0f * unit(rng);
    const float w = 32.0f + 224.0f * unit(rng), h = 32.0f + 224.0f * unit(rng);
    PutBox(&boxes, k, cx, cy, w, h);
    scores[k] = unit(rng);
  }
  for (int method : {1, 2}) {
    const SoftNmsParams p = Params(method);
    const Result cpu = RunSoftNms(p, boxes, scores);
    const Result device = RunSoftNmsDeviceCode(p, boxes, scores, 512);
    EXPECT_GT(cpu.inds.size(), 500u);
    EXPECT_LT(cpu.inds.size(), 4500u);  // many drops
    ASSERT_EQ(device.inds, cpu.inds) << "method " << method;
    EXPECT_EQ(0, std::memcmp(device.dets.data(), cpu.dets.data(), cpu.dets.size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace opbridge
