// Multi-scale deformable attention kernel tests: a float64 reference written from the spec
// (sample at h = y * H - 0.5, w = x * W - 0.5, corners outside read 0), the grid_sample rule of
// the shared taps, the level checks, and independence from threads. The sweeps through ORT are in
// tests/python/test_multi_scale_deformable_attention.py.
#include "kernels/cpu/multi_scale_deformable_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/multi_scale_deformable_attention.h"
#include "kernels/cpu/bilinear_taps.h"
#include "kernels/shared/msda_taps.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Problem {
  MsdaDims dims;
  std::vector<int64_t> shapes, starts;
  std::vector<float> value, locations, weights;
};

Problem RandomProblem(int64_t batch, int64_t queries, int64_t heads, int64_t channels,
                      const std::vector<int64_t>& shapes, int64_t points, unsigned seed) {
  Problem p;
  p.shapes = shapes;
  const int64_t levels = static_cast<int64_t>(shapes.size()) / 2;
  int64_t rows = 0;
  for (int64_t l = 0; l < levels; ++l) {
    p.starts.push_back(rows);
    rows += shapes[2 * l] * shapes[2 * l + 1];
  }
  p.dims = {batch, rows, heads, channels, queries, levels, points};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), location(-0.2f, 1.2f), weight(0.0f, 1.0f);
  p.value.resize(batch * rows * heads * channels);
  for (auto& v : p.value) v = value(rng);
  p.locations.resize(batch * queries * heads * levels * points * 2);
  for (auto& v : p.locations) v = location(rng);
  p.weights.resize(batch * queries * heads * levels * points);
  for (auto& v : p.weights) v = weight(rng);
  return p;
}

std::vector<float> RunKernel(const Problem& p, const TaskRunner& runner = SerialTaskRunner()) {
  std::vector<float> out(p.dims.batch * p.dims.queries * p.dims.heads * p.dims.channels, -7.0f);
  const Status s = cpu::MultiScaleDeformableAttention(p.dims, p.value.data(), p.shapes.data(), p.starts.data(),
                                                      p.locations.data(), p.weights.data(), out.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Spec 5.12 in float64: sum over levels and points of attn * bilinear(value_l, h, w) with
// h = y * H - 0.5, w = x * W - 0.5; the four corners floor/floor + 1, each read as 0 outside.
std::vector<double> Reference(const Problem& p) {
  const MsdaDims& d = p.dims;
  std::vector<double> out(d.batch * d.queries * d.heads * d.channels, 0.0);
  for (int64_t n = 0; n < d.batch; ++n)
    for (int64_t q = 0; q < d.queries; ++q)
      for (int64_t m = 0; m < d.heads; ++m)
        for (int64_t l = 0; l < d.levels; ++l)
          for (int64_t k = 0; k < d.points; ++k) {
            const int64_t i = (((n * d.queries + q) * d.heads + m) * d.levels + l) * d.points + k;
            const int64_t height = p.shapes[2 * l], width = p.shapes[2 * l + 1];
            const double h = static_cast<double>(p.locations[2 * i + 1]) * height - 0.5;
            const double w = static_cast<double>(p.locations[2 * i]) * width - 0.5;
            const double attn = p.weights[i];
            const double h0 = std::floor(h), w0 = std::floor(w);
            for (int dy = 0; dy < 2; ++dy)
              for (int dx = 0; dx < 2; ++dx) {
                const double y = h0 + dy, x = w0 + dx;
                if (y < 0 || y >= height || x < 0 || x >= width) continue;
                const double weight = (dy ? h - h0 : 1 - (h - h0)) * (dx ? w - w0 : 1 - (w - w0));
                const int64_t row = p.starts[l] + static_cast<int64_t>(y) * width + static_cast<int64_t>(x);
                for (int64_t c = 0; c < d.channels; ++c) {
                  out[((n * d.queries + q) * d.heads + m) * d.channels + c] +=
                      attn * weight * p.value[((n * d.values + row) * d.heads + m) * d.channels + c];
                }
              }
          }
  return out;
}

TEST(MultiScaleDeformableAttentionKernel, MatchesTheSpecReference) {
  for (int64_t channels : {1, 3, 32, 33}) {
    for (int64_t points : {1, 4}) {
      const Problem p = RandomProblem(2, 5, 3, channels, {6, 5, 3, 2, 1, 1}, points, 7 + channels);
      const std::vector<float> got = RunKernel(p);
      const std::vector<double> want = Reference(p);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << channels << " " << points << " " << i;
    }
  }
}

TEST(MultiScaleDeformableAttentionKernel, IdenticalForAnyThreadCount) {
  const Problem p = RandomProblem(2, 77, 4, 33, {20, 30, 10, 15, 5, 8}, 3, 11);
  const std::vector<float> serial = RunKernel(p);
  for (int threads : {2, 3, 8}) {
    EXPECT_EQ(RunKernel(p, testing::ThreadedTaskRunner(threads)), serial) << threads;
  }
}

TEST(MultiScaleDeformableAttentionKernel, NanAndFarLocations) {
  Problem p = RandomProblem(1, 4, 1, 3, {4, 4}, 1, 3);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // query 0: x NaN; query 1: y infinite; query 2: far outside, finite; query 3: the centre.
  p.locations = {nan, 0.5f, 0.5f, inf, 1e30f, -1e30f, 0.5f, 0.5f};
  const std::vector<float> out = RunKernel(p);
  for (int c = 0; c < 3; ++c) {
    EXPECT_TRUE(std::isnan(out[0 * 3 + c]));  // F.grid_sample gives NaN for a NaN or infinite grid
    EXPECT_TRUE(std::isnan(out[1 * 3 + c]));
    EXPECT_EQ(out[2 * 3 + c], 0.0f);  // every corner outside
    // (0.5, 0.5) of a 4x4 map is pixel (1.5, 1.5): the mean of rows 5, 6, 9 and 10.
    const double mean = (p.value[5 * 3 + c] + p.value[6 * 3 + c] + p.value[9 * 3 + c] + p.value[10 * 3 + c]) / 4.0;
    EXPECT_NEAR(out[3 * 3 + c], p.weights[3] * mean, 1e-6);
  }
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// A thread per output element (image, query, head, channel) walks its head's levels and points in
// order, the levels 16 per launch (a later launch adds to what the earlier wrote), and adds each
// point's shared::MsdaPointTerm of its shared::MakeMsdaPointTaps with 32-bit indices; the CPU
// kernel's values must come out bit for bit.
std::vector<float> RunDeviceCode(const Problem& p) {
  const MsdaDims& d = p.dims;
  constexpr int64_t kLevelsPerLaunch = 16;
  std::vector<float> out(d.batch * d.queries * d.heads * d.channels, -7.0f);
  for (int64_t first = 0; first < d.levels; first += kLevelsPerLaunch) {  // the launches
    const int64_t levels = std::min(kLevelsPerLaunch, d.levels - first);
    for (int32_t index = 0; index < static_cast<int32_t>(out.size()); ++index) {  // the threads
      const int32_t c = index % d.channels, head_query = index / d.channels;
      const int32_t m = head_query % d.heads, n = head_query / (d.queries * d.heads);
      const int32_t first_point = head_query * d.levels * d.points + first * d.points;
      const float* location = p.locations.data() + 2 * first_point;
      const float* attention = p.weights.data() + first_point;
      float sum = first == 0 ? 0.0f : out[index];
      for (int64_t l = first; l < first + levels; ++l) {
        const int64_t height = p.shapes[2 * l], width = p.shapes[2 * l + 1];
        const cpu::GridTapBounds bounds(height, width);
        const float* rows = p.value.data() + ((n * d.values + p.starts[l]) * d.heads + m) * d.channels + c;
        for (int64_t k = 0; k < d.points; ++k, location += 2, ++attention) {
          const shared::MsdaPointTaps t = shared::MakeMsdaPointTaps(location, *attention, height, width, bounds);
          float v[4];
          for (int j = 0; j < 4; ++j) {
            v[j] = t.inside[j] ? rows[((t.y0 + (j >> 1)) * width + t.x0 + (j & 1)) * d.heads * d.channels] : 0.0f;
          }
          sum += shared::MsdaPointTerm(t, v[0], v[1], v[2], v[3]);
        }
      }
      out[index] = sum;
    }
  }
  return out;
}

TEST(MultiScaleDeformableAttentionDeviceCode, MatchesTheCpuKernelBitForBit) {
  std::vector<int64_t> eighteen_levels;  // two launches
  for (int64_t l = 0; l < 18; ++l) eighteen_levels.insert(eighteen_levels.end(), {1 + l % 4, 2 + l % 3});
  std::vector<Problem> problems = {RandomProblem(2, 5, 3, 32, {6, 5, 3, 2, 1, 1}, 4, 1),
                                   RandomProblem(1, 7, 2, 33, {20, 30, 10, 15}, 3, 2),
                                   RandomProblem(2, 3, 2, 5, eighteen_levels, 2, 3),
                                   RandomProblem(1, 3, 2, 4, {4, 4}, 0, 4)};  // no points: zeros
  Problem odd = RandomProblem(1, 4, 1, 3, {4, 4}, 1, 5);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  odd.locations = {nan, 0.5f, 0.5f, inf, 1e30f, -1e30f, 0.5f, 0.5f};
  problems.push_back(odd);
  for (const Problem& p : problems) {
    const std::vector<float> cpu = RunKernel(p), device = RunDeviceCode(p);
    ASSERT_EQ(cpu.size(), device.size());
    ASSERT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float)))
        << p.dims.levels << " levels, " << p.dims.points << " points, " << p.dims.channels << " channels";
  }
}

TEST(MultiScaleDeformableAttentionKernel, GridSampleTapsOfAThreeByFourMap) {
  const cpu::GridTapBounds bounds(3, 4);
  // Inside: north-west corner (1, 0), weights by distance.
  cpu::GridBilinearTap t = cpu::GridSampleBilinearTap(1.25f, 0.5f, bounds);
  EXPECT_EQ(t.x0, 1);
  EXPECT_EQ(t.y0, 0);
  EXPECT_FLOAT_EQ(t.nw, 0.5f * 0.75f);
  EXPECT_FLOAT_EQ(t.ne, 0.5f * 0.25f);
  EXPECT_FLOAT_EQ(t.sw, 0.5f * 0.75f);
  EXPECT_FLOAT_EQ(t.se, 0.5f * 0.25f);
  // Past the top-left edge: north-west corner (-1, -1), only its south-east corner (0, 0) inside.
  t = cpu::GridSampleBilinearTap(-0.5f, -0.25f, bounds);
  EXPECT_EQ(t.x0, -1);
  EXPECT_EQ(t.y0, -1);
  // Past the bottom-right edge: only the north-west corner (3, 2) is inside.
  t = cpu::GridSampleBilinearTap(3.5f, 2.5f, bounds);
  EXPECT_EQ(t.x0, 3);
  EXPECT_EQ(t.y0, 2);
  // Left of -1, at the last column plus one and beyond, infinite or NaN: no corner inside, the
  // corner (-1, H) whose four corners are all outside.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float x : {-1.5f, 4.0f, 1e20f, -1e20f, inf, nan}) {
    t = cpu::GridSampleBilinearTap(x, 1.0f, bounds);
    EXPECT_EQ(t.x0, -1) << x;
    EXPECT_EQ(t.y0, 3) << x;
  }
  // At exactly -1 the east corners (column 0) are inside, as in ATen, with weight 0.
  t = cpu::GridSampleBilinearTap(-1.0f, 1.0f, bounds);
  EXPECT_EQ(t.x0, -1);
  EXPECT_EQ(t.y0, 1);
  EXPECT_EQ(t.ne, 0.0f);
  EXPECT_EQ(t.se, 0.0f);
}

TEST(MultiScaleDeformableAttentionChecks, LevelRules) {
  MsdaDims dims{1, 30, 1, 1, 1, 2, 1};
  EXPECT_TRUE(CheckMsdaLevels({4, 5, 2, 5}, {0, 20}, dims).ok());
  EXPECT_EQ(CheckMsdaLevels({4, 5, 2, 4}, {0, 20}, dims).message(),
            "spatial_shapes must sum to S = 30 (value [N, S, M, D]) over the levels (sum of H * W), got 28");
  EXPECT_EQ(CheckMsdaLevels({4, 5, 2, 6}, {0, 20}, dims).message(),
            "spatial_shapes must sum to S = 30 (value [N, S, M, D]) over the levels (sum of H * W), but level 1 "
            "(2x6) starting at row 20 ends past it");
  EXPECT_EQ(CheckMsdaLevels({4, 5, 2, 5}, {0, 19}, dims).message(),
            "level_start_index[1] must be 20 (the sum of H * W of the levels before it, from spatial_shapes), got 19");
  EXPECT_EQ(CheckMsdaLevels({4, 5, 0, 5}, {0, 20}, dims).message(),
            "spatial_shapes[1] = (0, 5) must hold a height and width >= 1");
  const MsdaDims huge{1, 2147483668, 1, 1, 1, 2, 1};  // S = 20 + 2^31 rows
  EXPECT_EQ(CheckMsdaLevels({4, 5, 2147483648, 1}, {0, 20}, huge).message(),
            "spatial_shapes[1] = (2147483648, 1) must hold a height and width below 2^31");
  EXPECT_EQ(CheckMsdaLevels({-4, -5, 2, 5}, {0, 20}, dims).message(),
            "spatial_shapes[0] = (-4, -5) must hold a height and width >= 1");
  // Products that overflow int64 are not formed.
  EXPECT_FALSE(CheckMsdaLevels({int64_t{1} << 40, int64_t{1} << 40, 1, 1}, {0, 0}, dims).ok());
}

}  // namespace
}  // namespace opbridge
