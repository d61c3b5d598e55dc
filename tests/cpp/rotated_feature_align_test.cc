// Rotated feature align kernel tests against closed-form answers and a plain float64 reference.
// The sweeps through ORT (against a float64 reference of the spec, and mmcv's graphs) are in
// tests/python/test_rotated_feature_align.py.
#include "kernels/cpu/rotated_feature_align.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "half_values.h"
#include "kernels/shared/rotated_feature_align_taps.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Problem {
  int64_t n, c, h, w;
  std::vector<float> features;  // [n, c, h, w]
  std::vector<float> boxes;     // [n, h, w, 5]: (y, x, w, h, angle)
};

// Channel plane i (of n * c) holds f(y, x) = i + 0.5 y + 0.25 x: bilinear interpolation is
// exact on it, and every value is exact in float32.
float Ramp(int64_t plane, double y, double x) { return static_cast<float>(plane + 0.5 * y + 0.25 * x); }

Problem RampProblem(int64_t n, int64_t c, int64_t h, int64_t w) {
  Problem p{n, c, h, w, std::vector<float>(n * c * h * w), std::vector<float>(n * h * w * 5, 0.0f)};
  for (int64_t i = 0; i < n * c; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) p.features[(i * h + y) * w + x] = Ramp(i, y, x);
  return p;
}

void SetBox(Problem* p, int64_t n, int64_t y, int64_t x, std::vector<float> box) {
  std::copy(box.begin(), box.end(), p->boxes.begin() + ((n * p->h + y) * p->w + x) * 5);
}

std::vector<float> RunAlign(const Problem& pr, float spatial_scale, int64_t points, const TaskRunner& runner) {
  RotatedFeatureAlignParams params;
  params.spatial_scale = spatial_scale;
  params.points = points;
  std::vector<float> out(pr.features.size(), -7.0f);
  Status s = cpu::RotatedFeatureAlign(params, pr.features.data(), pr.n, pr.c, pr.h, pr.w, pr.boxes.data(),
                                      out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

float At(const Problem& p, const std::vector<float>& v, int64_t n, int64_t c, int64_t y, int64_t x) {
  return v[((n * p.c + c) * p.h + y) * p.w + x];
}

TEST(RotatedFeatureAlign, CentreSampleOfRamp) {
  Problem p = RampProblem(1, 2, 6, 7);
  // Pixel (1, 2) looks at (y, x) = (3.5, 4.25) (after spatial_scale 0.5).
  SetBox(&p, 0, 1, 2, {7.0f, 8.5f, 100.0f, 100.0f, 1.0f});
  const auto out = RunAlign(p, 0.5f, 1, SerialTaskRunner());
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_FLOAT_EQ(At(p, out, 0, c, 1, 2), Ramp(c, 1, 2) + Ramp(c, 3.5, 4.25));
    // Every other pixel's box is (0, 0, 0, 0, 0): it adds f(0, 0) = c.
    EXPECT_FLOAT_EQ(At(p, out, 0, c, 4, 6), Ramp(c, 4, 6) + Ramp(c, 0, 0));
  }
}

TEST(RotatedFeatureAlign, FiveSamplesOfRampAreFiveTimesTheCentre) {
  // The corners lie symmetrically about the centre, so on a linear field they sum to 4 times the
  // centre's value, whatever the angle, as long as none is clamped.
  Problem p = RampProblem(1, 3, 16, 20);
  const double angles[] = {0.0, 0.3, M_PI / 2, -M_PI / 2, 2.5, 7.0, -13.0};
  for (double angle : angles) {
    SetBox(&p, 0, 5, 6, {8.0f * 4, 10.0f * 4, 6.0f * 4, 3.0f * 4, static_cast<float>(angle)});
    const auto out = RunAlign(p, 0.25f, 5, SerialTaskRunner());
    for (int64_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(At(p, out, 0, c, 5, 6), Ramp(c, 5, 6) + 5.0 * Ramp(c, 8, 10), 2e-5) << angle;
    }
  }
}

TEST(RotatedFeatureAlign, AngleZeroCornersAreAxisAligned) {
  // Angle 0: cos = 1, sin = 0, so the corners are (y +- h/2, x +- w/2) exactly. A field that is
  // 1 at one corner only checks which corner is read: corner 1 is (y + h/2, x + w/2).
  Problem p{1, 1, 9, 9, std::vector<float>(81, 0.0f), std::vector<float>(81 * 5, 0.0f)};
  const int64_t corner_y = 4 + 2, corner_x = 4 + 1;
  p.features[corner_y * 9 + corner_x] = 1.0f;
  SetBox(&p, 0, 0, 0, {4.0f, 4.0f, 2.0f, 4.0f, 0.0f});  // w = 2, h = 4 around (4, 4)
  auto out = RunAlign(p, 1.0f, 5, SerialTaskRunner());
  EXPECT_EQ(out[0], 1.0f);
  // With points = 1 only the centre is read.
  out = RunAlign(p, 1.0f, 1, SerialTaskRunner());
  EXPECT_EQ(out[0], 0.0f);
}

TEST(RotatedFeatureAlign, EdgesClampAndOutsideReadsZero) {
  Problem p = RampProblem(1, 1, 4, 5);
  SetBox(&p, 0, 0, 0, {-0.5f, 2.0f, 0, 0, 0});   // y in [-1, 0): row 0
  SetBox(&p, 0, 0, 1, {3.5f, 4.75f, 0, 0, 0});   // y in (H - 1, H], x in (W - 1, W]: the last pixel
  SetBox(&p, 0, 0, 2, {-1.0f, -1.0f, 0, 0, 0});  // exactly -1: still inside, pixel (0, 0)
  SetBox(&p, 0, 0, 3, {4.0f, 5.0f, 0, 0, 0});    // exactly (H, W): still inside
  SetBox(&p, 0, 0, 4, {-1.01f, 2.0f, 0, 0, 0});  // below -1: 0
  SetBox(&p, 0, 1, 0, {1.0f, 5.01f, 0, 0, 0});   // beyond W: 0
  SetBox(&p, 0, 1, 1, {INFINITY, 1.0f, 0, 0, 0});
  SetBox(&p, 0, 1, 2, {1.0f, -INFINITY, 0, 0, 0});
  const auto out = RunAlign(p, 1.0f, 1, SerialTaskRunner());
  EXPECT_FLOAT_EQ(At(p, out, 0, 0, 0, 0), Ramp(0, 0, 0) + Ramp(0, 0, 2));
  EXPECT_FLOAT_EQ(At(p, out, 0, 0, 0, 1), Ramp(0, 0, 1) + Ramp(0, 3, 4));
  EXPECT_FLOAT_EQ(At(p, out, 0, 0, 0, 2), Ramp(0, 0, 2) + Ramp(0, 0, 0));
  EXPECT_FLOAT_EQ(At(p, out, 0, 0, 0, 3), Ramp(0, 0, 3) + Ramp(0, 3, 4));
  EXPECT_EQ(At(p, out, 0, 0, 0, 4), Ramp(0, 0, 4));
  EXPECT_EQ(At(p, out, 0, 0, 1, 0), Ramp(0, 1, 0));
  EXPECT_EQ(At(p, out, 0, 0, 1, 1), Ramp(0, 1, 1));
  EXPECT_EQ(At(p, out, 0, 0, 1, 2), Ramp(0, 1, 2));
}

TEST(RotatedFeatureAlign, NaNCoordinates) {
  Problem p = RampProblem(1, 2, 3, 4);
  SetBox(&p, 0, 0, 0, {NAN, 1.0f, 0, 0, 0});      // NaN y, x inside: NaN
  SetBox(&p, 0, 0, 1, {NAN, 9.0f, 0, 0, 0});      // NaN y, x beyond W: outside, reads 0 (mmcv)
  SetBox(&p, 0, 0, 2, {1.0f, 1.0f, 0, 0, NAN});   // NaN angle: unused with points = 1
  SetBox(&p, 0, 0, 3, {1.0f, 1.0f, INFINITY, 1.0f, 0.0f});  // w = inf at angle 0: wy = 0 * inf
  auto out = RunAlign(p, 1.0f, 1, SerialTaskRunner());
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_TRUE(std::isnan(At(p, out, 0, c, 0, 0)));
    EXPECT_EQ(At(p, out, 0, c, 0, 1), Ramp(c, 0, 1));
    EXPECT_FLOAT_EQ(At(p, out, 0, c, 0, 2), Ramp(c, 0, 2) + Ramp(c, 1, 1));
    EXPECT_FLOAT_EQ(At(p, out, 0, c, 0, 3), Ramp(c, 0, 3) + Ramp(c, 1, 1));
  }
  out = RunAlign(p, 1.0f, 5, SerialTaskRunner());
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_TRUE(std::isnan(At(p, out, 0, c, 0, 2)));  // the angle is used now
    // The corners' y is NaN (0 * inf) but their x is infinite: outside, tested first, so they
    // read 0 (as in mmcv) and only the centre counts.
    EXPECT_FLOAT_EQ(At(p, out, 0, c, 0, 3), Ramp(c, 0, 3) + Ramp(c, 1, 1));
  }
}

// A plain float64 computation of one output from the spec (section 5.9 of the compatibility
// reference): the points in float64, each sampled by RoIAlign's bilinear rules.
double ReferenceSample(const float* plane, int64_t h, int64_t w, double y, double x) {
  if (y < -1 || y > h || x < -1 || x > w) return 0.0;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  const int64_t y0 = std::min<int64_t>(static_cast<int64_t>(std::floor(y)), h - 1);
  const int64_t x0 = std::min<int64_t>(static_cast<int64_t>(std::floor(x)), w - 1);
  const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double ly = std::min(y - y0, 1.0) * (y0 < h - 1), lx = std::min(x - x0, 1.0) * (x0 < w - 1);
  return (1 - ly) * (1 - lx) * plane[y0 * w + x0] + (1 - ly) * lx * plane[y0 * w + x1] +
         ly * (1 - lx) * plane[y1 * w + x0] + ly * lx * plane[y1 * w + x1];
}

double ReferenceOutput(const Problem& p, double scale, int64_t points, int64_t n, int64_t c, int64_t y, int64_t x) {
  const float* box = p.boxes.data() + ((n * p.h + y) * p.w + x) * 5;
  const float* plane = p.features.data() + (n * p.c + c) * p.h * p.w;
  const double cy = box[0] * scale, cx = box[1] * scale, a = box[4];
  const double half_w = box[2] * scale / 2, half_h = box[3] * scale / 2;
  // The box's half-width vector (cos a, sin a) * w / 2 and half-height vector (-sin a, cos a) * h / 2.
  const double wx = std::cos(a) * half_w, wy = std::sin(a) * half_w;
  const double hx = -std::sin(a) * half_h, hy = std::cos(a) * half_h;
  double out = plane[y * p.w + x] + ReferenceSample(plane, p.h, p.w, cy, cx);
  if (points == 5) {
    const double signs[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};  // (w, h) vector signs
    for (const auto& s : signs) {
      out += ReferenceSample(plane, p.h, p.w, cy + s[0] * wy + s[1] * hy, cx + s[0] * wx + s[1] * hx);
    }
  }
  return out;
}

Problem RandomProblem(int64_t n, int64_t c, int64_t h, int64_t w, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), pos(-12.0f, 8.0f * std::max(h, w) + 12.0f),
      size(0.0f, 60.0f), angle(-7.0f, 7.0f);
  Problem p{n, c, h, w, std::vector<float>(n * c * h * w), std::vector<float>(n * h * w * 5)};
  for (float& v : p.features) v = value(rng);
  for (size_t i = 0; i < p.boxes.size(); i += 5) {
    p.boxes[i] = pos(rng);
    p.boxes[i + 1] = pos(rng);
    p.boxes[i + 2] = size(rng);
    p.boxes[i + 3] = size(rng);
    p.boxes[i + 4] = angle(rng);
  }
  return p;
}

TEST(RotatedFeatureAlign, MatchesFloat64Reference) {
  const Problem p = RandomProblem(2, 3, 11, 13, 3);
  for (int64_t points : {1, 5}) {
    const auto out = RunAlign(p, 0.125f, points, SerialTaskRunner());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t y = 0; y < 11; ++y)
          for (int64_t x = 0; x < 13; ++x) {
            EXPECT_NEAR(At(p, out, n, c, y, x), ReferenceOutput(p, 0.125, points, n, c, y, x), 1e-4)
                << points << " " << n << " " << c << " " << y << " " << x;
          }
  }
}

TEST(RotatedFeatureAlign, ResultDoesNotDependOnThreads) {
  // 100 x 90 pixels: two chunks of taps with points = 5, several runs per chunk.
  const Problem p = RandomProblem(2, 5, 100, 90, 7);
  for (int64_t points : {1, 5}) {
    const auto serial = RunAlign(p, 0.125f, points, SerialTaskRunner());
    const auto threaded = RunAlign(p, 0.125f, points, testing::ThreadedTaskRunner(3));
    ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float))) << points;
  }
}

TEST(RotatedFeatureAlign, EmptyAxesWriteNothing) {
  RotatedFeatureAlignParams params;
  params.points = 5;
  for (auto dims : {std::vector<int64_t>{0, 3, 4, 4}, {2, 0, 4, 4}, {2, 3, 0, 4}, {2, 3, 4, 0}}) {
    Status s = cpu::RotatedFeatureAlign<float>(params, nullptr, dims[0], dims[1], dims[2], dims[3], nullptr, nullptr,
                                        SerialTaskRunner());
    EXPECT_TRUE(s.ok()) << s.message();
  }
}

// A shape rule of both providers (CheckRotatedFeatureAlignShapes): the kernels index a plane with 32 bits.
TEST(RotatedFeatureAlign, HugePlaneIsAnError) {
  Status s = CheckRotatedFeatureAlignShapes({1, 1, 65536, 32768}, {1, 65536, 32768, 5});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "features planes (H * W) of more than 2^31 - 1 elements are not supported, got 65536x32768");
  EXPECT_TRUE(CheckRotatedFeatureAlignShapes({0, 1, 65536, 32768}, {0, 65536, 32768, 5}).ok());  // nothing to read
}

// The CUDA kernel (kernels/cuda/rotated_feature_align.cu) on the host, thread by thread: each
// (image, run of 16 channels, pixel) makes its taps once, then adds each channel's value and samples
// in order.
// T: the storage type of features, boxes and output.
template <class T>
std::vector<T> DeviceAlignOf(const Problem& pr, const std::vector<T>& features, const std::vector<T>& boxes,
                             float spatial_scale, int64_t points) {
  RotatedFeatureAlignParams params;
  params.spatial_scale = spatial_scale;
  params.points = points;
  const int32_t plane = static_cast<int32_t>(pr.h * pr.w), runs = static_cast<int32_t>((pr.c + 15) / 16);
  std::vector<T> out(features.size());
  for (int64_t t = 0; t < pr.n * runs * plane; ++t) {
    const int32_t pixel = static_cast<int32_t>(t % plane), run = static_cast<int32_t>((t / plane) % runs);
    const int64_t n = t / plane / runs;
    shared::BilinearTaps taps[5];
    shared::PixelTaps(params, boxes.data() + (n * plane + pixel) * 5, pr.h, pr.w, taps);
    for (int64_t c = run * 16; c < std::min<int64_t>(pr.c, (run + 1) * 16); ++c) {
      const T* in = features.data() + (n * pr.c + c) * plane;
      float value = shared::Load(in + pixel);
      for (int k = 0; k < points; ++k) value += shared::BilinearSample(taps[k], in, pr.w);
      shared::Store(&out[(n * pr.c + c) * plane + pixel], value);
    }
  }
  return out;
}

std::vector<float> DeviceAlign(const Problem& pr, float spatial_scale, int64_t points) {
  return DeviceAlignOf(pr, pr.features, pr.boxes, spatial_scale, points);
}

// Random boxes across and off the edges at any angle, channel counts around the run of 16, NaN and
// infinite features and boxes.
Problem RandomProblem(std::mt19937* rng, int64_t channels) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> coordinate(-6.0f, 40.0f), side(0.0f, 30.0f), angle(-4.0f, 4.0f);
  Problem pr{2, channels, 13, 17, std::vector<float>(2 * channels * 13 * 17), std::vector<float>(2 * 13 * 17 * 5)};
  for (auto& v : pr.features) v = normal(*rng);
  for (size_t b = 0; b < pr.boxes.size(); b += 5) {
    pr.boxes[b] = coordinate(*rng);
    pr.boxes[b + 1] = coordinate(*rng);
    pr.boxes[b + 2] = side(*rng);
    pr.boxes[b + 3] = side(*rng);
    pr.boxes[b + 4] = angle(*rng);
  }
  pr.features[3] = std::numeric_limits<float>::infinity();
  pr.features[pr.features.size() - 9] = std::numeric_limits<float>::quiet_NaN();
  pr.boxes[5 * 7] = std::numeric_limits<float>::quiet_NaN();
  pr.boxes[5 * 11 + 4] = std::numeric_limits<float>::infinity();
  return pr;
}

// The GPU's values are the CPU kernel's bits: 1 and 5 points, both scales, RandomProblem's cases.
TEST(RotatedFeatureAlignDeviceCode, MatchesTheCpuKernelBitForBit) {
  std::mt19937 rng(21);
  for (int64_t channels : {1, 16, 35}) {
    const Problem pr = RandomProblem(&rng, channels);
    for (int64_t points : {1, 5}) {
      for (float scale : {0.5f, 1.0f}) {
        const auto cpu = RunAlign(pr, scale, points, SerialTaskRunner());
        const auto device = DeviceAlign(pr, scale, points);
        EXPECT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
            << channels << " channels, " << points << " points, scale " << scale;
      }
    }
  }
}

// Half storage: the CPU kernel, serially and on 3 threads, and the device code give the float32
// kernel's outputs on the half values (features and boxes), rounded once; a feature past float16's
// 65,504 is infinite there.
template <class T>
void ExpectHalfRotatedFeatureAlign() {
  std::mt19937 rng(22);
  for (int64_t channels : {1, 35}) {
    Problem pr = RandomProblem(&rng, channels);
    pr.features[40] = 7e4f;
    const std::vector<T> features = testing::StoredAs<T>(pr.features), boxes = testing::StoredAs<T>(pr.boxes);
    Problem rounded = pr;
    rounded.features = testing::FloatsOf(features);
    rounded.boxes = testing::FloatsOf(boxes);
    for (int64_t points : {1, 5}) {
      const std::vector<float> float32 = RunAlign(rounded, 0.5f, points, SerialTaskRunner());
      RotatedFeatureAlignParams params;
      params.spatial_scale = 0.5f;
      params.points = points;
      std::vector<T> serial(features.size()), threaded(features.size());
      ASSERT_TRUE(cpu::RotatedFeatureAlign(params, features.data(), pr.n, pr.c, pr.h, pr.w, boxes.data(), serial.data(),
                                           SerialTaskRunner()).ok());
      ASSERT_TRUE(cpu::RotatedFeatureAlign(params, features.data(), pr.n, pr.c, pr.h, pr.w, boxes.data(),
                                           threaded.data(), testing::ThreadedTaskRunner(3)).ok());
      const std::vector<T> device = DeviceAlignOf(pr, features, boxes, 0.5f, points);
      testing::ExpectFloat32RoundedOnce(serial, float32, {&threaded, &device},
                                        std::to_string(channels) + " channels, " + std::to_string(points) + " points");
    }
  }
}

TEST(RotatedFeatureAlignHalfStorage, Float16IsTheFloat32KernelRoundedOnce) {
  ExpectHalfRotatedFeatureAlign<shared::Float16>();
}
TEST(RotatedFeatureAlignHalfStorage, BFloat16IsTheFloat32KernelRoundedOnce) {
  ExpectHalfRotatedFeatureAlign<shared::BFloat16>();
}

}  // namespace
}  // namespace opbridge
