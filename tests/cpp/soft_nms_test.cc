// Soft-NMS kernel tests against hand-worked cases. The sweeps against a float reference
// written from the spec are in tests/python/test_soft_nms.py.
#include "kernels/cpu/soft_nms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

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

}  // namespace
}  // namespace opbridge
