// HeatmapsToKeypoints kernel tests: hand-worked argmax positions and ties, NaN, roi limits,
// thread independence, and a small case against values torchvision 0.29.1 computed.
//
// Many cases use a roi exactly the heatmap's size: the bicubic resize is then exact (weights
// 0, 1, 0, 0 on every axis, so each resized sample is its source sample), which makes the
// argmax known by hand.
#include "kernels/cpu/heatmaps_to_keypoints.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Keypoints {
  std::vector<float> xy, scores;
};

Keypoints RunKeypoints(const std::vector<float>& maps, int64_t k, int64_t map_h, int64_t map_w,
                       const std::vector<float>& rois, const TaskRunner& runner = SerialTaskRunner()) {
  const int64_t r = static_cast<int64_t>(rois.size() / 4);
  EXPECT_EQ(maps.size(), static_cast<size_t>(r * k * map_h * map_w));
  Keypoints out{std::vector<float>(static_cast<size_t>(r * k * 3), -7.0f), std::vector<float>(static_cast<size_t>(r * k), -7.0f)};
  HeapScratchAllocator scratch;
  Status s = cpu::HeatmapsToKeypoints(maps.data(), r, k, map_h, map_w, rois.data(), out.xy.data(), out.scores.data(),
                                      scratch, runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

using testing::Bits;

TEST(HeatmapsToKeypoints, SinglePeakMapsBackToItsPixelCentre) {
  const int64_t h = 5, w = 6;
  std::vector<float> map(h * w, -1.0f);
  map[2 * w + 3] = 4.0f;  // row 2, column 3
  // Exact-size roi: pixel (2, 3) has centre (3.5, 2.5) inside the roi.
  auto out = RunKeypoints(map, 1, h, w, {10.0f, 20.0f, 16.0f, 25.0f});
  EXPECT_EQ(out.xy[0], 13.5f);
  EXPECT_EQ(out.xy[1], 22.5f);
  EXPECT_EQ(out.xy[2], 1.0f);
  EXPECT_EQ(out.scores[0], 4.0f);
  // Upsampled 2x: source pixel j covers resized pixels 2j and 2j + 1, which sample it at the
  // same distance (a quarter pixel) on either side; the peak lands on one of them.
  const int64_t s = 56;
  std::vector<float> big(s * s, 0.0f);
  big[17 * s + 40] = 10.0f;
  out = RunKeypoints(big, 1, s, s, {100.0f, 200.0f, 212.0f, 312.0f});
  EXPECT_NEAR(out.xy[0], 100.0f + 2 * 40 + 1, 0.5f + 1e-4f);
  EXPECT_NEAR(out.xy[1], 200.0f + 2 * 17 + 1, 0.5f + 1e-4f);
  EXPECT_GT(out.scores[0], 7.0f);  // 10 times the centre weight squared, about 0.88^2
}

TEST(HeatmapsToKeypoints, ArgmaxTiePicksTheFirstInRowMajorOrder) {
  const int64_t h = 4, w = 5;
  std::vector<float> map(h * w, 0.0f);
  map[2 * w + 1] = 3.0f;
  map[1 * w + 4] = 3.0f;  // first in row-major order
  map[3 * w + 0] = 3.0f;
  const auto out = RunKeypoints(map, 1, h, w, {0.0f, 0.0f, 5.0f, 4.0f});
  EXPECT_EQ(out.xy[0], 4.5f);
  EXPECT_EQ(out.xy[1], 1.5f);
  // A constant map: every resized sample is 0, so the first one, pixel (0, 0), at half a
  // corrected pixel from the roi's corner: width 7.5 makes an 8-wide map, correction 7.5 / 8.
  const std::vector<float> zeros(56 * 56, 0.0f);
  const auto flat = RunKeypoints(zeros, 1, 56, 56, {1.0f, 2.0f, 8.5f, 12.0f});
  EXPECT_EQ(flat.xy[0], 0.5f * (7.5f / 8.0f) + 1.0f);
  EXPECT_EQ(flat.xy[1], 0.5f * 1.0f + 2.0f);
  EXPECT_EQ(flat.scores[0], 0.0f);
}

// Resized maps wider than one band of columns (1024) are scanned band by band; the tie rule must
// still pick the first maximum in row-major order, here in the second band of row 0 although
// the first band's row 1 is seen first.
TEST(HeatmapsToKeypoints, ArgmaxTieAcrossColumnBands) {
  const int64_t h = 2, w = 3000;
  std::vector<float> map(h * w, 0.0f);
  map[0 * w + 2000] = 1.0f;
  map[1 * w + 5] = 1.0f;
  const auto out = RunKeypoints(map, 1, h, w, {0.0f, 0.0f, 3000.0f, 2.0f});
  EXPECT_EQ(out.xy[0], 2000.5f);
  EXPECT_EQ(out.xy[1], 0.5f);
  EXPECT_EQ(out.scores[0], 1.0f);
}

// torch.argmax counts NaN as the maximum and takes the first NaN. A NaN spreads to every
// resized sample that reads it, even with weight 0 (NaN * 0 is NaN): source (3, 3) is read by
// output rows and columns 1..4 of an exact-size resize, so the first NaN is at (1, 1).
TEST(HeatmapsToKeypoints, NaNIsTheMaximum) {
  const int64_t h = 6, w = 6;
  std::vector<float> map(h * w, 0.0f);
  map[0] = 5.0f;
  map[3 * w + 3] = NAN;
  const auto out = RunKeypoints(map, 1, h, w, {0.0f, 0.0f, 6.0f, 6.0f});
  EXPECT_EQ(out.xy[0], 1.5f);
  EXPECT_EQ(out.xy[1], 1.5f);
  EXPECT_TRUE(std::isnan(out.scores[0]));
}

// Width and height are clamped to at least 1 (an inverted roi is one pixel wide); a roi whose
// width or height is not finite gives NaN coordinates and score.
TEST(HeatmapsToKeypoints, DegenerateAndNonFiniteRois) {
  const int64_t s = 8;
  std::vector<float> maps(5 * s * s);  // one map per roi
  for (int64_t i = 0; i < 5 * s * s; ++i) maps[i] = static_cast<float>(i % 5);
  const auto out = RunKeypoints(maps, 1, s, s,
                                {5.0f, 6.0f, 2.0f, 6.5f,                 // inverted x, height 0.5
                                 NAN, 0.0f, 10.0f, 10.0f,                // NaN width
                                 0.0f, 0.0f, INFINITY, 10.0f,            // infinite width
                                 -3e38f, 0.0f, 3e38f, 10.0f,             // width overflows to infinity
                                 INFINITY, 1.0f, 0.0f, 3.0f});           // width -inf, clamped to 1
  EXPECT_EQ(out.xy[0], 5.5f);
  EXPECT_EQ(out.xy[1], 6.5f);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(std::isnan(out.xy[3 * i]) && std::isnan(out.xy[3 * i + 1]) && std::isnan(out.scores[i])) << i;
    EXPECT_EQ(out.xy[3 * i + 2], 1.0f);
  }
  EXPECT_EQ(out.xy[12], INFINITY);  // x = 0.5 + inf, as torchvision computes it
  EXPECT_FALSE(std::isnan(out.scores[4]));
}

TEST(HeatmapsToKeypoints, OversizedRoiIsAnError) {
  const std::vector<float> map(2 * 56 * 56, 0.0f);
  std::vector<float> xy(6), scores(2);
  HeapScratchAllocator scratch;
  const std::vector<float> rois = {0, 0, 10, 10, 0, 0, 9000, 8000};  // 9000 * 8000 > 2^26
  Status s = cpu::HeatmapsToKeypoints(map.data(), 2, 1, 56, 56, rois.data(), xy.data(), scores.data(), scratch,
                                      SerialTaskRunner());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("roi 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("samples"), std::string::npos) << s.message();
  // Thin rois are fine: 1 x 60000 is within the limit.
  const auto out = RunKeypoints(std::vector<float>(map.begin(), map.begin() + 56 * 56), 1, 56, 56, {0, 0, 60000, 1});
  EXPECT_EQ(out.xy[0], 0.5f);
}

TEST(HeatmapsToKeypoints, EmptyInputsAreFine) {
  HeapScratchAllocator scratch;
  EXPECT_TRUE(cpu::HeatmapsToKeypoints(nullptr, 0, 17, 56, 56, nullptr, nullptr, nullptr, scratch, SerialTaskRunner()).ok());
  EXPECT_TRUE(cpu::HeatmapsToKeypoints(nullptr, 3, 0, 56, 56, nullptr, nullptr, nullptr, scratch, SerialTaskRunner()).ok());
}

TEST(HeatmapsToKeypoints, ResultDoesNotDependOnThreads) {
  std::mt19937 rng(5);
  std::normal_distribution<float> logit(0.0f, 3.0f);
  std::uniform_real_distribution<float> pos(-50.0f, 500.0f), len(0.3f, 1500.0f);
  const int64_t r = 12, k = 5, s = 56;
  std::vector<float> maps(r * k * s * s), rois;
  for (float& v : maps) v = logit(rng);
  for (int64_t i = 0; i < r; ++i) {
    const float x = pos(rng), y = pos(rng);
    rois.insert(rois.end(), {x, y, x + len(rng), y + len(rng) / 4});
  }
  const auto serial = RunKeypoints(maps, k, s, s, rois, SerialTaskRunner());
  const auto threaded = RunKeypoints(maps, k, s, s, rois, testing::ThreadedTaskRunner(3));
  ASSERT_EQ(0, std::memcmp(serial.xy.data(), threaded.xy.data(), serial.xy.size() * sizeof(float)));
  ASSERT_EQ(0, std::memcmp(serial.scores.data(), threaded.scores.data(), serial.scores.size() * sizeof(float)));
}

// Values torchvision 0.29.1 computed (heatmaps_to_keypoints with PyTorch 2.14.1 on an AVX-512
// CPU): maps[k][y][x] = ((7x + 13y + 5k) % 17) / 4 - 2 (5x5, two keypoints), roi
// (3.25, 7.5, 40.6, 29.1), resized to 22x38.
TEST(HeatmapsToKeypoints, MatchesTorchvisionBitForBit) {
  std::vector<float> maps(2 * 25);
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t x = 0; x < 5; ++x)
        maps[(k * 5 + y) * 5 + x] = static_cast<float>((x * 7 + y * 13 + k * 5) % 17) / 4.0f - 2.0f;
  const auto out = RunKeypoints(maps, 2, 5, 5, {3.25f, 7.5f, 40.6f, 29.1f});
  const uint32_t xy[6] = {0x421c80acu, 0x41bd999au, 0x3f800000u, 0x421c80acu, 0x40ffb587u, 0x3f800000u};
  const uint32_t scores[2] = {0x4016f78bu, 0x4013589bu};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Bits(out.xy[i]), xy[i]) << "xy " << i;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(Bits(out.scores[i]), scores[i]) << "score " << i;
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// A block of the CUDA kernel: it caches the source taps of the resized map's rows and columns (maps
// of at most 512 x 512; the roi 0, 3, 700.5, 20 is wider and computes them per sample), its threads take
// samples t, t + 256, ... of the resized map (ResizedHeatmapSampleAt), keep a HeatmapArgmax each, and the block merges them pairwise; thread 0
// writes WriteKeypoint. Run that way on the host it must give the CPU kernel's bits: random maps,
// ties (quantized values), NaN samples, rois smaller and larger than the map, degenerate and
// non-finite rois.
Keypoints RunDeviceCode(const std::vector<float>& maps, int64_t k, int64_t map_h, int64_t map_w,
                        const std::vector<float>& rois) {
  constexpr int kThreads = 256;
  const int64_t r = static_cast<int64_t>(rois.size() / 4);
  Keypoints out{std::vector<float>(r * k * 3), std::vector<float>(r * k)};
  for (int64_t task = 0; task < r * k; ++task) {
    const float* roi = rois.data() + 4 * (task / k);
    const shared::RoiHeatmap m = shared::MakeRoiHeatmap(roi);
    std::vector<shared::HeatmapArgmax> partial(kThreads, shared::HeatmapArgmax::None());
    if (m.finite && m.within_limit) {
      const float* map = maps.data() + task * map_h * map_w;
      const float scale_h = shared::InterpolateScale(map_h, m.out_h), scale_w = shared::InterpolateScale(map_w, m.out_w);
      const bool cached = shared::CanCacheTaps(m, map_h, map_w);
      std::vector<shared::CachedCubicTap> rows, columns;  // the block's taps in shared memory
      for (int64_t y = 0; cached && y < m.out_h; ++y) rows.push_back(shared::CacheTap(shared::CubicSourceTap(scale_h, y, map_h)));
      for (int64_t x = 0; cached && x < m.out_w; ++x) {
        columns.push_back(shared::CacheTap(shared::CubicSourceTap(scale_w, x, map_w)));
      }
      for (int t = 0; t < kThreads; ++t) {
        for (int32_t i = t; i < m.out_h * m.out_w; i += kThreads) {
          const int32_t y = i / static_cast<int32_t>(m.out_w), x = i % static_cast<int32_t>(m.out_w);
          partial[t].Consider(cached ? shared::ResizedHeatmapSampleAt(map, map_w, rows[y], columns[x])
                                     : shared::ResizedHeatmapSample(map, map_h, map_w, scale_h, scale_w, y, x),
                              i);
        }
      }
    }
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
      for (int t = 0; t < stride; ++t) partial[t].Consider(partial[t + stride].value, partial[t + stride].index);
    }
    shared::WriteKeypoint(roi, m, partial[0], out.xy.data() + 3 * task, out.scores.data() + task);
  }
  return out;
}

TEST(HeatmapsToKeypointsDeviceCode, GivesTheCpuKernelsBits) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int64_t k = 3, map_h = 12, map_w = 10;
  const std::vector<float> rois = {0, 0, 12, 10,   5, 7, 60.5f, 33.2f,   2, 2, 2.5f, 2.2f,   10, 10, 4, 4,
                                   NAN, 0, 5, 5,   0, 0, INFINITY, 5,   -INFINITY, 0, 3, 9,   1, 1, 300, 41,
                                   0, 3, 700.5f, 20};
  const int64_t r = static_cast<int64_t>(rois.size() / 4);
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<float> maps(r * k * map_h * map_w);
    for (float& v : maps) {
      v = variant == 0 ? unit(rng) : std::round(unit(rng) * 4.0f);  // ties after the resize too
      if (variant == 2 && unit(rng) < 0.01f) v = NAN;
    }
    const Keypoints cpu = RunKeypoints(maps, k, map_h, map_w, rois);
    const Keypoints device = RunDeviceCode(maps, k, map_h, map_w, rois);
    for (size_t i = 0; i < cpu.xy.size(); ++i) ASSERT_EQ(Bits(device.xy[i]), Bits(cpu.xy[i])) << variant << " xy " << i;
    for (size_t i = 0; i < cpu.scores.size(); ++i) {
      ASSERT_EQ(Bits(device.scores[i]), Bits(cpu.scores[i])) << variant << " score " << i;
    }
  }
}

}  // namespace
}  // namespace opbridge
