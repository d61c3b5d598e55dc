// Cumulative maximum / minimum kernel tests against a reference written from the rule (the latest
// NaN seen, else the extreme with the latest index among equals), for every dtype, swept over
// shapes that reach every path of the scan engine (lanes, lane chunks, eight-row blocks and their
// tails). The sweeps through ORT against torch.cummax are in tests/python/test_cummax.py.
#include "kernels/cpu/cummax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/corner_pool.h"
#include "kernels/shared/extreme_scan.h"
#include "task_runners.h"

namespace opbridge {
namespace {

template <class T>
struct Result {
  std::vector<T> values;
  std::vector<int64_t> indices;
};

// The reference, position by position: the extreme of x[0..s] along the axis, computed from
// scratch for every s: with a NaN among them, the last NaN; otherwise the largest (smallest)
// value, at the last index holding a value equal to it.
template <class T>
Result<T> Reference(const std::vector<T>& x, const Shape& shape, int64_t axis, Extreme extreme) {
  const int64_t n = static_cast<int64_t>(x.size());
  Result<T> r{std::vector<T>(n), std::vector<int64_t>(n)};
  int64_t stride = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) stride *= shape[d];
  const int64_t size = shape.empty() ? 1 : shape[axis];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = (i / stride) % size;
    const int64_t base = i - s * stride;
    int64_t best = -1;
    for (int64_t k = 0; k <= s; ++k) {  // the last NaN, if any
      if (x[base + k * stride] != x[base + k * stride]) best = k;
    }
    if (best < 0) {
      best = 0;
      for (int64_t k = 1; k <= s; ++k) {
        const T v = x[base + k * stride], b = x[base + best * stride];
        if (extreme == Extreme::kMax ? !(v < b) : !(v > b)) best = k;
      }
    }
    r.values[i] = x[base + best * stride];
    r.indices[i] = best;
  }
  return r;
}

template <class T>
Result<T> RunCumMax(const std::vector<T>& x, const Shape& shape, int64_t dim, Extreme extreme,
                    const TaskRunner& runner) {
  Result<T> r{std::vector<T>(x.size(), T(7)), std::vector<int64_t>(x.size(), -7)};
  CumMaxParams p;
  p.dim = dim;
  p.extreme = extreme;
  const Status s = cpu::CumMax(p, x.data(), shape, r.values.data(), r.indices.data(), runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

// Bit-for-bit equality (NaN equals NaN; -0 and +0 differ).
template <class T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Values from a few levels (many ties), with NaN and infinities among them for floating types.
template <class T>
std::vector<T> TieData(int64_t n, unsigned seed, bool specials) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(-3, 3), roll(0, 99);
  std::vector<T> x(n);
  for (T& v : x) {
    v = static_cast<T>(level(rng));
    if constexpr (std::is_floating_point_v<T>) {
      const int r = roll(rng);
      if (specials && r < 3) v = std::numeric_limits<T>::quiet_NaN();
      if (specials && r == 3) v = std::numeric_limits<T>::infinity();
      if (specials && r == 4) v = -std::numeric_limits<T>::infinity();
      if (r == 5) v = T(-0.0);
    } else {
      if (roll(rng) < 2) v = roll(rng) < 50 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
    }
  }
  return x;
}

const std::vector<Shape> kShapes = {
    {1}, {13}, {3, 1}, {9, 8}, {16, 24}, {17, 29}, {8, 7}, {2, 3, 4}, {3, 8, 17}, {2, 1, 5, 3}, {2, 11, 9, 8},
    {1, 2, 3, 2, 3}, {2, 1100, 3}, {3, 2050}, {9, 1, 33}, {17, 600},
};

template <class T>
void SweepShapes(bool specials) {
  unsigned seed = 1;
  for (const Shape& shape : kShapes) {
    const auto x = TieData<T>(NumElements(shape), seed++, specials);
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t dim = -rank; dim < rank; ++dim) {
      for (Extreme extreme : {Extreme::kMax, Extreme::kMin}) {
        const Result<T> expected = Reference(x, shape, dim < 0 ? dim + rank : dim, extreme);
        const Result<T> got = RunCumMax(x, shape, dim, extreme, SerialTaskRunner());
        EXPECT_TRUE(SameBits(got.values, expected.values)) << ShapeToString(shape) << " dim " << dim;
        EXPECT_EQ(got.indices, expected.indices) << ShapeToString(shape) << " dim " << dim;
      }
    }
  }
}

TEST(CumMax, FloatMatchesReference) { SweepShapes<float>(true); }
TEST(CumMax, DoubleMatchesReference) { SweepShapes<double>(true); }
TEST(CumMax, Int32MatchesReference) { SweepShapes<int32_t>(false); }
TEST(CumMax, Int64MatchesReference) { SweepShapes<int64_t>(false); }
TEST(CumMax, FloatWithoutSpecialsMatchesReference) { SweepShapes<float>(false); }

TEST(CumMax, TiesTakeTheLatestIndex) {
  const std::vector<float> x = {2, 2, 1, 2, 3, 3};
  const auto max = RunCumMax(x, {6}, 0, Extreme::kMax, SerialTaskRunner());
  EXPECT_EQ(max.values, (std::vector<float>{2, 2, 2, 2, 3, 3}));
  EXPECT_EQ(max.indices, (std::vector<int64_t>{0, 1, 1, 3, 4, 5}));
  const auto min = RunCumMax(x, {6}, 0, Extreme::kMin, SerialTaskRunner());
  EXPECT_EQ(min.values, (std::vector<float>{2, 2, 1, 1, 1, 1}));
  EXPECT_EQ(min.indices, (std::vector<int64_t>{0, 1, 2, 2, 2, 2}));
}

TEST(CumMax, SignedZerosAreEqualSoTheLaterWins) {
  const std::vector<float> x = {0.0f, -0.0f, 0.0f, -1.0f};
  const auto r = RunCumMax(x, {4}, 0, Extreme::kMax, SerialTaskRunner());
  EXPECT_TRUE(SameBits(r.values, std::vector<float>{0.0f, -0.0f, 0.0f, 0.0f}));
  EXPECT_EQ(r.indices, (std::vector<int64_t>{0, 1, 2, 2}));
}

TEST(CumMax, NanSticksAndALaterNanTakesOver) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // torch.cummax([1, nan, 3, nan, 0]) = ([1, nan, nan, nan, nan], [0, 1, 1, 3, 3]); same for cummin.
  const std::vector<float> x = {1, nan, 3, nan, 0};
  for (Extreme extreme : {Extreme::kMax, Extreme::kMin}) {
    const auto r = RunCumMax(x, {5}, 0, extreme, SerialTaskRunner());
    EXPECT_EQ(r.values[0], 1.0f);
    for (int i = 1; i < 5; ++i) EXPECT_TRUE(std::isnan(r.values[i]));
    EXPECT_EQ(r.indices, (std::vector<int64_t>{0, 1, 1, 3, 3}));
  }
  // A leading NaN: every index 0 until the next NaN.
  const auto lead = RunCumMax(std::vector<float>{nan, 5, 6, nan}, {4}, 0, Extreme::kMax, SerialTaskRunner());
  EXPECT_EQ(lead.indices, (std::vector<int64_t>{0, 0, 0, 3}));
}

TEST(CumMax, InfinitiesAreOrdinaryValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-inf, -inf, inf, inf, 1};
  const auto max = RunCumMax(x, {5}, 0, Extreme::kMax, SerialTaskRunner());
  EXPECT_EQ(max.values, (std::vector<float>{-inf, -inf, inf, inf, inf}));
  EXPECT_EQ(max.indices, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  const auto min = RunCumMax(x, {5}, 0, Extreme::kMin, SerialTaskRunner());
  EXPECT_EQ(min.indices, (std::vector<int64_t>{0, 1, 1, 1, 1}));
}

TEST(CumMax, ScalarIsOneElement) {
  for (int64_t dim : {0, -1}) {
    const auto r = RunCumMax(std::vector<float>{4.5f}, {}, dim, Extreme::kMax, SerialTaskRunner());
    EXPECT_EQ(r.values, std::vector<float>{4.5f});
    EXPECT_EQ(r.indices, std::vector<int64_t>{0});
  }
}

TEST(CumMax, EmptyShapesWriteNothing) {
  // The last: the product of the other dims does not fit in int64 (only the 0 makes it a tensor).
  const int64_t huge = int64_t{1} << 40;
  for (const Shape& shape : std::vector<Shape>{{0}, {0, 5}, {5, 0}, {3, 0, 4}, {2, 3, 0}, {huge, 0, huge}}) {
    for (int64_t dim = 0; dim < static_cast<int64_t>(shape.size()); ++dim) {
      CumMaxParams p;
      p.dim = dim;
      const Status s = cpu::CumMax<float>(p, nullptr, shape, nullptr, nullptr, SerialTaskRunner());
      EXPECT_TRUE(s.ok()) << s.message();
    }
  }
}

TEST(CumMax, DimOutOfRangeIsAnError) {
  CumMaxParams p;
  const float x = 1.0f;
  float v = 0.0f;
  int64_t i = 0;
  p.dim = 3;
  EXPECT_EQ(cpu::CumMax(p, &x, {1, 1, 1}, &v, &i, SerialTaskRunner()).message(),
            "dim must be in [-3, 2] for an input of rank 3, got 3");
  p.dim = -4;
  EXPECT_EQ(cpu::CumMax(p, &x, {1, 1, 1}, &v, &i, SerialTaskRunner()).message(),
            "dim must be in [-3, 2] for an input of rank 3, got -4");
  p.dim = 1;
  EXPECT_EQ(cpu::CumMax(p, &x, {}, &v, &i, SerialTaskRunner()).message(),
            "dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got 1");
  p.dim = -2;
  EXPECT_EQ(cpu::CumMax(p, &x, {}, &v, &i, SerialTaskRunner()).message(),
            "dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got -2");
}

TEST(CumMax, ThreadCountDoesNotChangeResults) {
  // Large enough for many tasks on every path: rows (dim 2), lanes (dim 1) and lane chunks (dim 0).
  const Shape shape = {3, 700, 131};
  const auto x = TieData<float>(NumElements(shape), 77, true);
  for (int64_t dim = 0; dim < 3; ++dim) {
    for (Extreme extreme : {Extreme::kMax, Extreme::kMin}) {
      const auto serial = RunCumMax(x, shape, dim, extreme, SerialTaskRunner());
      const auto threaded = RunCumMax(x, shape, dim, extreme, testing::ThreadedTaskRunner(3));
      EXPECT_TRUE(SameBits(serial.values, threaded.values)) << dim;
      EXPECT_EQ(serial.indices, threaded.indices) << dim;
    }
  }
  const Shape wide = {2, 3000};  // lane chunks along dim 0
  const auto y = TieData<float>(NumElements(wide), 78, true);
  const auto serial = RunCumMax(y, wide, 0, Extreme::kMax, SerialTaskRunner());
  const auto threaded = RunCumMax(y, wide, 0, Extreme::kMax, testing::ThreadedTaskRunner(2));
  EXPECT_TRUE(SameBits(serial.values, threaded.values));
  EXPECT_EQ(serial.indices, threaded.indices);
}

// The GPU's scan (kernels/cuda/cummax.cu) run on the host, kernel by kernel and thread by thread:
// lines cut into segments of `length` steps (any length: the kernels take any); with more than one
// segment, a first pass writes each segment's result, the results ([outer, segments, inner]) are
// scanned the same way, and a second pass scans each segment from the result before it. inner > 1:
// a thread per (line, segment) running shared::ScanSegment; inner = 1: a warp per (line, segment),
// 32 elements at a time, scanned over the lanes level by level as __shfl_up_sync does (each level
// reads the lanes' values from before it), joined to the carry, the carry then taken from the last
// valid lane.
template <Extreme kWhich, class T>
void DeviceScan(const T* in, const int64_t* steps_in, const ScanLayout& layout, bool reverse, int64_t length,
                T* values, int64_t* steps_out) {
  using Run = shared::ExtremeRun<T>;
  const int64_t outer = layout.outer, steps = layout.steps, inner = layout.inner;
  if (outer == 0 || steps == 0 || inner == 0) return;
  const int64_t segments = (steps + length - 1) / length;
  std::vector<T> total_values;
  std::vector<int64_t> total_steps;
  if (segments > 1) {
    total_values.resize(outer * segments * inner);
    total_steps.resize(total_values.size());
  }
  // pass 0 writes the segments' results (only with segments > 1), pass 1 the outputs.
  for (int pass = segments > 1 ? 0 : 1; pass < 2; ++pass) {
    const bool totals = pass == 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t segment = 0; segment < segments; ++segment) {
        const int64_t begin = segment * length, end = std::min(steps, begin + length);
        const int64_t at_result = (o * segments + segment) * inner;  // + j
        bool has_carry = !totals && segment > 0;
        if (inner > 1) {
          for (int64_t j = 0; j < inner; ++j) {
            shared::ScanLine<T, int64_t> line{in, steps_in, totals ? nullptr : values, totals ? nullptr : steps_out,
                                              o * steps * inner + j + (reverse ? (steps - 1) * inner : 0),
                                              reverse ? -inner : inner};
            Run carry{};
            if (has_carry) carry = {total_values[at_result + j - inner], total_steps[at_result + j - inner]};
            const Run run = shared::ScanSegment<kWhich>(line, begin, end, has_carry, carry);
            if (totals) {
              total_values[at_result + j] = run.value;
              total_steps[at_result + j] = run.step;
            }
          }
          continue;
        }
        const int64_t base = o * steps + (reverse ? steps - 1 : 0), stride = reverse ? -1 : 1;
        Run carry{};
        if (has_carry) carry = {total_values[at_result - 1], total_steps[at_result - 1]};
        for (int64_t first = begin; first < end; first += 32) {
          Run lanes[32] = {};
          for (int lane = 0; lane < 32; ++lane) {
            const int64_t s = first + lane;
            if (s < end) lanes[lane] = {in[base + s * stride], steps_in != nullptr ? steps_in[base + s * stride] : s};
          }
          for (int d = 1; d < 32; d *= 2) {
            for (int lane = 31; lane >= d; --lane) lanes[lane] = shared::CombineRuns<kWhich>(lanes[lane - d], lanes[lane]);
          }
          for (int lane = 0; lane < 32; ++lane) {
            if (has_carry) lanes[lane] = shared::CombineRuns<kWhich>(carry, lanes[lane]);
            const int64_t s = first + lane;
            if (s < end && !totals) {
              values[base + s * stride] = lanes[lane].value;
              if (steps_out != nullptr) steps_out[base + s * stride] = lanes[lane].step;
            }
          }
          carry = lanes[std::min<int64_t>(31, end - 1 - first)];
          has_carry = true;
        }
        if (totals) {
          total_values[at_result] = carry.value;
          total_steps[at_result] = carry.step;
        }
      }
    }
    if (totals) {  // the segments' results scanned in place, along the segments (in segments of >= 2)
      DeviceScan<kWhich>(total_values.data(), total_steps.data(), ScanLayout{outer, segments, inner}, false,
                         std::max<int64_t>(length, 2), total_values.data(), total_steps.data());
    }
  }
}

template <class T>
void ExpectDeviceScanMatchesCpu(bool specials) {
  unsigned seed = 100;
  for (const Shape& shape : kShapes) {
    const auto x = TieData<T>(NumElements(shape), seed++, specials);
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t dim = 0; dim < rank; ++dim) {
      const ScanLayout layout = CumMaxLayout(shape, dim);
      for (int64_t length : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{32}, int64_t{45}, layout.steps}) {
        if (length < 1) continue;
        for (Extreme extreme : {Extreme::kMax, Extreme::kMin}) {
          const Result<T> cpu = RunCumMax(x, shape, dim, extreme, SerialTaskRunner());
          Result<T> device{std::vector<T>(x.size(), T(7)), std::vector<int64_t>(x.size(), -7)};
          if (extreme == Extreme::kMax) {
            DeviceScan<Extreme::kMax>(x.data(), nullptr, layout, false, length, device.values.data(),
                                      device.indices.data());
          } else {
            DeviceScan<Extreme::kMin>(x.data(), nullptr, layout, false, length, device.values.data(),
                                      device.indices.data());
          }
          EXPECT_TRUE(SameBits(device.values, cpu.values)) << ShapeToString(shape) << " dim " << dim << " length " << length;
          EXPECT_EQ(device.indices, cpu.indices) << ShapeToString(shape) << " dim " << dim << " length " << length;
        }
      }
    }
  }
}

// The CUDA kernels' scan, in segments of every size and both layouts, gives the CPU kernel's values
// and indices exactly: NaN, ties, infinities and signed zeros (TieData), every dtype.
TEST(CumMaxDeviceCode, SegmentedScansMatchTheCpuKernel) {
  ExpectDeviceScanMatchesCpu<float>(true);
  ExpectDeviceScanMatchesCpu<double>(true);
  ExpectDeviceScanMatchesCpu<int32_t>(false);
  ExpectDeviceScanMatchesCpu<int64_t>(false);
}

// Corner pooling's reverse scans (top, left) and forward ones, values only, in segments.
TEST(CumMaxDeviceCode, CornerPoolScansMatchTheCpuKernel) {
  for (const Shape& shape : {Shape{2, 3, 37, 29}, Shape{1, 2, 70, 5}, Shape{1, 1, 3, 90}}) {
    const auto x = TieData<float>(NumElements(shape), 9, true);
    for (int64_t mode = 0; mode < 4; ++mode) {
      CornerPoolParams p;
      p.mode = static_cast<CornerPoolMode>(mode);
      std::vector<float> cpu(x.size()), device(x.size(), 7.0f);
      ASSERT_TRUE(cpu::CornerPool(p, x.data(), shape, cpu.data(), SerialTaskRunner()).ok());
      bool reverse = false;
      const ScanLayout layout = CornerPoolLayout(shape, p.mode, &reverse);
      for (int64_t length : {int64_t{1}, int64_t{4}, int64_t{33}, layout.steps}) {
        DeviceScan<Extreme::kMax>(x.data(), nullptr, layout, reverse, length, device.data(), nullptr);
        EXPECT_TRUE(SameBits(device, cpu)) << ShapeToString(shape) << " mode " << mode << " length " << length;
      }
    }
  }
}

}  // namespace
}  // namespace opbridge
