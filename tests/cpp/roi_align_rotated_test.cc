// RoIAlignRotated kernel tests against closed-form answers. The float64 sweeps (angles, sampling,
// aligned, clockwise, boxes outside) are in tests/python/test_roi_align_rotated.py.
#include "kernels/cpu/roi_align_rotated.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/roi_align.h"
#include "kernels/shared/roi_align_rotated_grid.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Feature {
  int64_t n, c, h, w;
  std::vector<float> data;
};

// Channel c of image i holds f(y, x) = c + 10 i + x + 2 y: bilinear interpolation is exact on a
// plane, so inside the map every sample reads its own coordinates.
Feature PlaneFeature(int64_t n, int64_t c, int64_t h, int64_t w) {
  Feature f{n, c, h, w, std::vector<float>(static_cast<size_t>(n * c * h * w))};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          f.data[((i * c + k) * h + y) * w + x] = static_cast<float>(k + 10 * i + x + 2 * y);
  return f;
}

std::vector<float> RunRotated(const RoiAlignRotatedParams& p, const Feature& f, const std::vector<float>& rois,
                       const TaskRunner& runner) {
  const int64_t r = static_cast<int64_t>(rois.size() / 6);
  std::vector<float> out(static_cast<size_t>(r * f.c * p.output_height * p.output_width));
  HeapScratchAllocator scratch;
  Status s = cpu::RoiAlignRotated(p, f.data.data(), f.n, f.c, f.h, f.w, rois.data(), r, out.data(), scratch, runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// A box well inside the map: every bin's average is the plane at the bin's rotated centre.
TEST(RoiAlignRotated, BinsOfAPlaneAreTheirRotatedCentres) {
  const Feature f = PlaneFeature(2, 3, 40, 40);
  for (bool clockwise : {false, true}) {
    for (int64_t sampling : {0, 1, 2, 3}) {
      RoiAlignRotatedParams p;
      p.output_height = 3;
      p.output_width = 4;
      p.sampling_ratio = sampling;
      p.spatial_scale = 0.5f;
      p.aligned = true;
      p.clockwise = clockwise;
      const float theta = 0.6f;
      const std::vector<float> rois = {1, 40, 38, 24, 18, theta};  // centre (19.5, 18.5), sides 12 x 9
      const auto out = RunRotated(p, f, rois, SerialTaskRunner());
      const double t = clockwise ? -theta : theta;
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t ph = 0; ph < 3; ++ph)
          for (int64_t pw = 0; pw < 4; ++pw) {
            const double yy = -4.5 + (ph + 0.5) * 3.0, xx = -6.0 + (pw + 0.5) * 3.0;
            const double y = yy * std::cos(t) - xx * std::sin(t) + 18.5;
            const double x = yy * std::sin(t) + xx * std::cos(t) + 19.5;
            EXPECT_NEAR(out[(c * 3 + ph) * 4 + pw], c + 10 + x + 2 * y, 2e-4)
                << "clockwise " << clockwise << " sampling " << sampling;
          }
    }
  }
}

// A quarter turn swaps the box's axes: the output is the axis-aligned pooling of the box with
// width and height exchanged, read along the turned axes.
TEST(RoiAlignRotated, QuarterTurnOfAPlane) {
  const Feature f = PlaneFeature(1, 1, 20, 20);
  RoiAlignRotatedParams p;
  p.output_height = 1;
  p.output_width = 2;
  p.sampling_ratio = 1;
  p.aligned = false;
  const std::vector<float> rois = {0, 10, 8, 4, 2, static_cast<float>(M_PI / 2)};
  const auto out = RunRotated(p, f, rois, SerialTaskRunner());
  // Bin pw's centre in the box frame is (yy, xx) = (0, -1 + 2 pw); turned: y = -xx + 8, x = 10.
  EXPECT_NEAR(out[0], 10 + 2 * 9.0, 1e-4);
  EXPECT_NEAR(out[1], 10 + 2 * 7.0, 1e-4);
}

TEST(RoiAlignRotated, NonFiniteBoxGivesNanAndEmptyAxisGivesZero) {
  const Feature f = PlaneFeature(1, 2, 8, 8);
  RoiAlignRotatedParams p;
  p.output_height = p.output_width = 2;
  const std::vector<float> rois = {0, NAN, 2, 2, 2, 0, 0, 4, 4, 2, 2, INFINITY};
  const auto out = RunRotated(p, f, rois, SerialTaskRunner());
  for (float v : out) EXPECT_TRUE(std::isnan(v));
  const Feature empty{1, 2, 0, 8, {}};
  const auto zeros = RunRotated(p, empty, {0, 1, 1, 2, 2, 0.3f}, SerialTaskRunner());
  for (float v : zeros) EXPECT_EQ(v, 0.0f);
}

TEST(RoiAlignRotated, OutputRowsPlaceEachRoi) {
  const Feature f = PlaneFeature(1, 2, 16, 16);
  RoiAlignRotatedParams p;
  p.output_height = p.output_width = 2;
  p.sampling_ratio = 2;
  const std::vector<float> rois = {0, 4, 4, 3, 3, 0.2f, 0, 10, 9, 5, 4, -1.0f};
  const auto in_order = RunRotated(p, f, rois, SerialTaskRunner());
  const int64_t rows[] = {1, 0};
  std::vector<float> swapped(in_order.size());
  HeapScratchAllocator scratch;
  ASSERT_TRUE(cpu::RoiAlignRotated(p, f.data.data(), 1, 2, 16, 16, rois.data(), 2, swapped.data(), scratch,
                                   SerialTaskRunner(), rows).ok());
  const size_t row = in_order.size() / 2;
  for (size_t i = 0; i < row; ++i) {
    EXPECT_EQ(swapped[row + i], in_order[i]);
    EXPECT_EQ(swapped[i], in_order[row + i]);
  }
}

TEST(RoiAlignRotated, ThreadCountDoesNotChangeResults) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  Feature f{2, 9, 30, 37, std::vector<float>(2 * 9 * 30 * 37)};
  for (float& v : f.data) v = normal(rng);
  std::vector<float> rois;
  for (int r = 0; r < 900; ++r) {  // more sample points than one preparation group
    rois.insert(rois.end(), {static_cast<float>(r % 2), unit(rng) * 80 - 5, unit(rng) * 70 - 5, unit(rng) * 40,
                             unit(rng) * 40, unit(rng) * 12 - 6});
  }
  RoiAlignRotatedParams p;
  p.output_height = p.output_width = 7;
  p.sampling_ratio = 2;
  p.spatial_scale = 0.5f;
  const auto serial = RunRotated(p, f, rois, SerialTaskRunner());
  const auto threaded = RunRotated(p, f, rois, testing::ThreadedTaskRunner(3));
  EXPECT_EQ(serial, threaded);
}


// Many RoIs over a small map take the blocked path (channels interleaved in blocks, the last one
// partial); one channel alone takes the planar path. Every channel must come out bit for bit the
// same either way.
TEST(RoiAlignRotated, BlockedAndPlanarPathsAgreeBitForBit) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  const int64_t channels = 40, h = 12, w = 17;
  Feature f{2, channels, h, w, std::vector<float>(2 * channels * h * w)};
  for (float& v : f.data) v = normal(rng);
  std::vector<float> rois;
  for (int r = 0; r < 60; ++r) {
    rois.insert(rois.end(), {static_cast<float>(r % 2), unit(rng) * 24 - 2, unit(rng) * 18 - 2, unit(rng) * 20,
                             unit(rng) * 20, unit(rng) * 8 - 4});
  }
  RoiAlignRotatedParams p;
  p.output_height = 3;
  p.output_width = 4;
  p.sampling_ratio = 0;
  const auto all = RunRotated(p, f, rois, testing::ThreadedTaskRunner(2));
  const int64_t bins = 12;
  for (int64_t c = 0; c < channels; ++c) {
    Feature one{2, 1, h, w, std::vector<float>(2 * h * w)};
    for (int64_t b = 0; b < 2; ++b) {
      std::copy_n(f.data.begin() + (b * channels + c) * h * w, h * w, one.data.begin() + b * h * w);
    }
    const auto alone = RunRotated(p, one, rois, SerialTaskRunner());
    for (int64_t r = 0; r < 60; ++r) {
      for (int64_t bin = 0; bin < bins; ++bin) {
        ASSERT_EQ(all[(r * channels + c) * bins + bin], alone[r * bins + bin]) << "roi " << r << " channel " << c;
      }
    }
  }
}

// The CUDA kernel (kernels/cuda/roi_align_rotated.cu) on the host, thread by thread: each RoI
// planned (its geometry; NaN rows for a batch index outside (-1, N) or a grid beyond the sample
// limits), then each output element summing its bin's points in (iy, ix) order.
std::vector<float> DeviceRotated(const RoiAlignRotatedParams& p, const Feature& f, const std::vector<float>& rois) {
  const int64_t r_count = static_cast<int64_t>(rois.size() / 6), bins = p.output_height * p.output_width;
  std::vector<float> out(static_cast<size_t>(r_count * f.c * bins));
  for (int32_t e = 0; e < static_cast<int32_t>(out.size()); ++e) {
    const int32_t bin = e % bins, rc = e / bins, c = rc % f.c, r = rc / f.c;
    const float* roi = rois.data() + r * 6;
    const shared::RotatedGeometry g = shared::MakeRotatedGeometry(p, roi);
    const bool valid = shared::IsRoiBatchIndex(roi[0], f.n) &&
                       shared::WithinSampleBudget(g.grid_h, g.grid_w, p.output_height, p.output_width);
    if (!valid || !g.finite) {
      out[e] = NAN;
      continue;
    }
    const float* plane = f.data.data() + (static_cast<int64_t>(roi[0]) * f.c + c) * f.h * f.w;
    const int32_t ph = bin / static_cast<int32_t>(p.output_width), pw = bin % static_cast<int32_t>(p.output_width);
    float sum = 0.0f;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const shared::BilinearTaps t = shared::MakeRotatedTaps(g, ph, pw, iy, ix, f.h, f.w);
        if (t.base != shared::kTapsOutside) sum += shared::BilinearSample(t, plane, f.w);
      }
    }
    out[e] = sum / g.count;
  }
  return out;
}

// The GPU's values are the CPU kernel's bits over both of its paths (planar for one channel, blocked
// for many), adaptive and fixed sampling, aligned or not, clockwise or not, boxes across and off the
// edges, a NaN box, and NaN and infinite features; the RoIs the CPU op refuses give NaN rows.
TEST(RoiAlignRotatedDeviceCode, MatchesTheCpuKernelBitForBit) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pos(-8.0f, 72.0f), side(0.5f, 40.0f), angle(-3.5f, 3.5f);
  std::normal_distribution<float> normal;
  for (int64_t channels : {1, 5, 40}) {
    Feature f{2, channels, 33, 29, std::vector<float>(static_cast<size_t>(2 * channels * 33 * 29))};
    for (auto& v : f.data) v = normal(rng);
    f.data[7] = std::numeric_limits<float>::quiet_NaN();
    f.data[f.data.size() / 2] = std::numeric_limits<float>::infinity();
    std::vector<float> rois;
    for (int k = 0; k < 24; ++k) {
      rois.insert(rois.end(), {static_cast<float>(k % 2), pos(rng), pos(rng), side(rng), side(rng), angle(rng)});
    }
    rois.insert(rois.end(), {1, NAN, 10, 5, 5, 0.3f});  // a NaN box
    for (int64_t sampling : {0, 2}) {
      for (bool aligned : {false, true}) {
        for (bool clockwise : {false, true}) {
          RoiAlignRotatedParams p;
          p.output_height = 3;
          p.output_width = 4;
          p.sampling_ratio = sampling;
          p.spatial_scale = 0.5f;
          p.aligned = aligned;
          p.clockwise = clockwise;
          const auto cpu = RunRotated(p, f, rois, SerialTaskRunner());
          const auto device = DeviceRotated(p, f, rois);
          EXPECT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
              << channels << " channels, sampling " << sampling << ", aligned " << aligned << ", clockwise " << clockwise;
        }
      }
    }
  }
  // What the CPU op refuses: a batch index out of range, a grid beyond the limits.
  RoiAlignRotatedParams p;
  const Feature f = PlaneFeature(1, 2, 8, 8);
  for (const std::vector<float>& roi : {std::vector<float>{1, 4, 4, 2, 2, 0}, std::vector<float>{0, 4, 4, 3e7f, 2, 0}}) {
    const auto device = DeviceRotated(p, f, roi);
    EXPECT_TRUE(std::all_of(device.begin(), device.end(), [](float v) { return std::isnan(v); }));
  }
}

// The taps' test of a point beyond the map, y > height, in float against shared::FloatAtMost: the
// answers of mmcv's comparison in double, for sizes where a float holds the size and where it does
// not (2^24 + 1 and beyond), where a double does not either (2^53 + 1 and beyond, up to int64's
// largest, rounded on conversion), and points at, next to and between the floats around each size,
// infinities and NaN.
TEST(RoiAlignRotatedTaps, TheFloatBoundComparesAsDoubleDoes) {
  std::vector<int64_t> sizes = {1, 2, 7, 255, 1000, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, (1 << 24) + 2,
                                (1 << 24) + 3, (1 << 25) + 1, (int64_t{1} << 40) + 12345,
                                (int64_t{1} << 53) + 1, (int64_t{1} << 53) + 3, (int64_t{1} << 62) - 1,
                                (int64_t{1} << 62) + (int64_t{1} << 38) + 1, std::numeric_limits<int64_t>::max()};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) sizes.push_back(static_cast<int64_t>(rng() >> (rng() % 63 + 1)));
  for (const int64_t size : sizes) {
    const float bound = shared::FloatAtMost(size);
    ASSERT_LE(static_cast<double>(bound), static_cast<double>(size)) << size;
    ASSERT_GT(static_cast<double>(std::nextafterf(bound, INFINITY)), static_cast<double>(size)) << size;
    const float near = static_cast<float>(size);
    std::vector<float> points = {near, std::nextafterf(near, 0.0f), std::nextafterf(near, INFINITY), bound,
                                 std::nextafterf(bound, INFINITY), -1.0f, 0.0f, INFINITY, -INFINITY, NAN};
    for (int k = 0; k < 20; ++k) points.push_back(near * static_cast<float>(rng() % 2000) / 1000.0f);
    for (const float y : points) {
      EXPECT_EQ(y > bound, static_cast<double>(y) > static_cast<double>(size)) << "size " << size << ", y " << y;
    }
  }
  // The taps agree: a point just above a size that no float holds is outside, the float below it inside.
  const int64_t odd = (1 << 24) + 1;
  EXPECT_EQ(shared::MakeBilinearTaps(16777216.0f, 0.0f, odd, 4).base, 16777216 * 4);
  EXPECT_EQ(shared::MakeBilinearTaps(16777218.0f, 0.0f, odd, 4).base, shared::kTapsOutside);
}

}  // namespace
}  // namespace opbridge
