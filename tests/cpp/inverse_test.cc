// Matrix inverse kernel tests: closed-form inverses, LAPACK's info for singular matrices, a plain
// float64 Gauss-Jordan reference, and independence from threads and from the other matrices of a
// lane group. The sweeps through ORT are in tests/python/test_inverse.py.
#include "kernels/cpu/inverse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/inverse.h"
#include "kernels/shared/inverse_lu.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Result {
  std::vector<float> inverse;
  std::vector<int32_t> info;
};

Result Invert(const std::vector<float>& matrices, int64_t m, const TaskRunner& runner = SerialTaskRunner()) {
  const int64_t batch = m == 0 ? 0 : static_cast<int64_t>(matrices.size()) / (m * m);
  Result r{std::vector<float>(matrices.size(), -7.0f), std::vector<int32_t>(batch, -7)};
  HeapScratchAllocator scratch;
  Status s = cpu::Inverse(matrices.data(), batch, m, r.inverse.data(), r.info.data(), scratch, runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

// Random matrices with entries uniform in [-1, 1] plus `shift` on the diagonal.
std::vector<float> RandomMatrices(int64_t batch, int64_t m, float shift, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(batch * m * m);
  for (auto& x : v) x = u(rng);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i) v[(b * m + i) * m + i] += shift;
  return v;
}

// Gauss-Jordan elimination with partial pivoting in float64 on [A | I]: the reference (not the
// kernel's method).
std::vector<double> ReferenceInverse(const float* a, int64_t m) {
  std::vector<double> aug(m * 2 * m, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) aug[i * 2 * m + j] = a[i * m + j];
    aug[i * 2 * m + m + i] = 1.0;
  }
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    for (int64_t r = k + 1; r < m; ++r)
      if (std::fabs(aug[r * 2 * m + k]) > std::fabs(aug[p * 2 * m + k])) p = r;
    for (int64_t c = 0; c < 2 * m; ++c) std::swap(aug[k * 2 * m + c], aug[p * 2 * m + c]);
    const double pivot = aug[k * 2 * m + k];
    for (int64_t c = 0; c < 2 * m; ++c) aug[k * 2 * m + c] /= pivot;
    for (int64_t r = 0; r < m; ++r) {
      if (r == k) continue;
      const double f = aug[r * 2 * m + k];
      for (int64_t c = 0; c < 2 * m; ++c) aug[r * 2 * m + c] -= f * aug[k * 2 * m + c];
    }
  }
  std::vector<double> inv(m * m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) inv[i * m + j] = aug[i * 2 * m + m + j];
  return inv;
}

// max |x - ref| / max |ref| over one matrix.
double RelativeError(const float* x, const std::vector<double>& ref) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::fabs(x[i] - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return err / scale;
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Inverse, TwoByTwoClosedForm) {
  // [[4, 7], [2, 6]]^-1 = [[0.6, -0.7], [-0.2, 0.4]]; in both paths (order 2, and order 9 with the
  // 2x2 block and an identity block).
  const Result r = Invert({4, 7, 2, 6}, 2);
  EXPECT_EQ(r.info[0], 0);
  const float expected[] = {0.6f, -0.7f, -0.2f, 0.4f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r.inverse[i], expected[i], 1e-7f) << i;
  std::vector<float> big(81, 0.0f);
  for (int i = 0; i < 9; ++i) big[i * 9 + i] = 1.0f;
  big[0] = 4, big[1] = 7, big[9] = 2, big[10] = 6;
  const Result rb = Invert(big, 9);
  EXPECT_EQ(rb.info[0], 0);
  EXPECT_NEAR(rb.inverse[0], 0.6f, 1e-6f);
  EXPECT_NEAR(rb.inverse[1], -0.7f, 1e-6f);
  EXPECT_NEAR(rb.inverse[9], -0.2f, 1e-6f);
  EXPECT_NEAR(rb.inverse[10], 0.4f, 1e-6f);
  EXPECT_EQ(rb.inverse[80], 1.0f);
}

TEST(Inverse, DiagonalAndPermutationAreExact) {
  // A diagonal matrix inverts to its reciprocals, correctly rounded (one division each); a
  // permutation matrix to its transpose. Orders on both paths, prime to 5 so that i -> (5 i + 2)
  // mod m is a permutation.
  for (int64_t m : {1, 3, 4, 8, 9, 16, 37}) {
    std::vector<float> diagonal(m * m, 0.0f), permutation(m * m, 0.0f);
    for (int64_t i = 0; i < m; ++i) {
      diagonal[i * m + i] = 0.5f + 1.7f * static_cast<float>(i);
      permutation[i * m + (i * 5 + 2) % m] = 1.0f;
    }
    const Result d = Invert(diagonal, m);
    const Result p = Invert(permutation, m);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        const float want = i == j ? 1.0f / diagonal[i * m + i] : 0.0f;
        EXPECT_EQ(d.inverse[i * m + j], want) << "m " << m << " diagonal (" << i << ", " << j << ")";
        EXPECT_EQ(p.inverse[i * m + j], permutation[j * m + i]) << "m " << m << " permutation (" << i << ", " << j << ")";
      }
    }
    EXPECT_EQ(d.info[0], 0);
    EXPECT_EQ(p.info[0], 0);
  }
}

// Well-conditioned matrices that need pivoting: diagonally dominant ones (shift m + 1) with their
// rows rotated by one.
std::vector<float> PivotingMatrices(int64_t batch, int64_t m, unsigned seed) {
  const auto dominant = RandomMatrices(batch, m, static_cast<float>(m + 1), seed);
  std::vector<float> rotated(dominant.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      std::copy_n(dominant.begin() + (b * m + (i + 1) % m) * m, m, rotated.begin() + (b * m + i) * m);
  return rotated;
}

TEST(Inverse, MatchesFloat64ReferenceAcrossOrders) {
  // Condition numbers below 3: float32 LU is within a few ulps (times a slowly growing factor of
  // the order) of the inverse.
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 31, 33, 64}) {
    const int64_t batch = 11;
    const auto a = PivotingMatrices(batch, m, static_cast<unsigned>(m));
    const Result r = Invert(a, m);
    for (int64_t b = 0; b < batch; ++b) {
      const auto ref = ReferenceInverse(a.data() + b * m * m, m);
      EXPECT_LT(RelativeError(r.inverse.data() + b * m * m, ref), 1e-6) << "m " << m << " matrix " << b;
      EXPECT_EQ(r.info[b], 0);
    }
  }
}

TEST(Inverse, SingularMatricesGiveLapackInfo) {
  // info = 1-based index of the first exactly zero pivot. The zero matrix: 1. Column 0 all ones
  // and column 1 all twos (the first step leaves exact zeros below the pivot in column 1): 2. A
  // zero last column: m. Rows 0 and 1 equal: they stay equal until one is the pivot, which
  // leaves the other exactly zero, and a zero row is the pivot only when nothing else is left: m.
  // Orders on both paths.
  for (int64_t m : {2, 3, 4, 8, 9, 12, 20}) {
    std::vector<float> all(m * m, 0.0f);
    auto dependent_columns = RandomMatrices(1, m, 2.0f, 4);
    for (int64_t i = 0; i < m; ++i) dependent_columns[i * m] = 1.0f, dependent_columns[i * m + 1] = 2.0f;
    auto zero_column = RandomMatrices(1, m, 2.0f, 6);
    for (int64_t i = 0; i < m; ++i) zero_column[i * m + m - 1] = 0.0f;
    auto equal_rows = RandomMatrices(1, m, 2.0f, 5);
    for (int64_t j = 0; j < m; ++j) equal_rows[m + j] = equal_rows[j];
    for (const auto* matrix : {&dependent_columns, &zero_column, &equal_rows}) {
      all.insert(all.end(), matrix->begin(), matrix->end());
    }
    const Result r = Invert(all, m);
    EXPECT_EQ(r.info[0], 1) << "m " << m;
    EXPECT_EQ(r.info[1], 2) << "m " << m;
    EXPECT_EQ(r.info[2], m) << "m " << m;
    EXPECT_EQ(r.info[3], m) << "m " << m;
    // Every output is written, with inf or NaN where the elimination divided by the zero pivot.
    for (int b = 0; b < 4; ++b) {
      const float* x = r.inverse.data() + b * m * m;
      EXPECT_TRUE(std::any_of(x, x + m * m, [](float v) { return !std::isfinite(v); })) << "m " << m << " b " << b;
    }
  }
}

TEST(Inverse, NanPropagates) {
  for (int64_t m : {3, 11}) {
    auto a = RandomMatrices(2, m, 2.0f, 7);
    a[m + 1] = std::numeric_limits<float>::quiet_NaN();  // matrix 0, row 1, column 1
    const Result r = Invert(a, m);
    EXPECT_EQ(r.info[0], 0);
    EXPECT_TRUE(std::any_of(r.inverse.begin(), r.inverse.begin() + m * m, [](float v) { return std::isnan(v); }));
    // The other matrix of the batch is unaffected.
    const auto ref = ReferenceInverse(a.data() + m * m, m);
    EXPECT_LT(RelativeError(r.inverse.data() + m * m, ref), 2e-6);
  }
}

TEST(Inverse, ResultsDoNotDependOnThreadsOrOtherMatrices) {
  // Lane groups of 8 and tasks of 256 small matrices: 1000 is neither. A matrix inverted alone
  // (padded lanes) gives the bits it gets inside a batch.
  for (int64_t m : {1, 4, 7, 8, 9, 24}) {
    const int64_t batch = m <= 8 ? 1000 : 70;
    const auto a = RandomMatrices(batch, m, 0.5f, 11);
    const Result serial = Invert(a, m);
    const Result threaded = Invert(a, m, testing::ThreadedTaskRunner(3));
    EXPECT_TRUE(BitIdentical(serial.inverse, threaded.inverse)) << "m " << m;
    EXPECT_EQ(serial.info, threaded.info);
    for (int64_t b : {int64_t{0}, batch / 2, batch - 1}) {
      const std::vector<float> one(a.begin() + b * m * m, a.begin() + (b + 1) * m * m);
      const Result alone = Invert(one, m);
      EXPECT_TRUE(std::equal(alone.inverse.begin(), alone.inverse.end(), serial.inverse.begin() + b * m * m))
          << "m " << m << " matrix " << b;
    }
  }
}

TEST(Inverse, EmptyBatchAndOrderZero) {
  HeapScratchAllocator scratch;
  int32_t info[3] = {-7, -7, -7};
  EXPECT_TRUE(cpu::Inverse(nullptr, 0, 4, nullptr, info, scratch, SerialTaskRunner()).ok());
  EXPECT_EQ(info[0], -7);
  EXPECT_TRUE(cpu::Inverse(nullptr, 3, 0, nullptr, info, scratch, SerialTaskRunner()).ok());
  EXPECT_EQ(info[0], 0);
  EXPECT_EQ(info[2], 0);
}

TEST(Inverse, ShapeRules) {
  EXPECT_TRUE(CheckInverseShape({4, 4}).ok());
  EXPECT_TRUE(CheckInverseShape({2, 3, 0, 0}).ok());
  EXPECT_EQ(CheckInverseShape({4}).message(),
            "input must have rank >= 2 [..., M, M] (a batch of square matrices), got shape [4]");
  EXPECT_EQ(CheckInverseShape({2, 3, 4}).message(),
            "input must hold square matrices [..., M, M], got shape [2, 3, 4] (3 rows, 4 columns)");
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(CheckInverseShape({huge, huge, 0, 0}).message(),
            "input's leading dims hold more than 2^63 - 1 matrices, got shape [1099511627776, 1099511627776, 0, 0]");
  EXPECT_TRUE(CheckInverseShape({huge, 0, 0}).ok());
  EXPECT_EQ(InverseBatch({2, 3, 5, 5}), 6);
  EXPECT_EQ(InverseBatch({5, 5}), 1);
  EXPECT_EQ(InverseInfoShape({2, 3, 5, 5}), (Shape{2, 3}));
}

TEST(Inverse, SingularErrorNamesTheMatrix) {
  const int32_t info[] = {0, 0, 0, 0, 0, 3};
  EXPECT_TRUE(CheckInverseInfo({2, 2, 4, 4}, info).ok());
  EXPECT_EQ(CheckInverseInfo({2, 3, 4, 4}, info).message(),
            "the matrix input[1, 2, :, :] is singular: diagonal element 3 (counting from 1) of U in its LU "
            "factorization with partial pivoting is exactly zero, as torch.linalg.inv reports it; with "
            "check_errors = 0 its inverse holds inf or NaN and the info output tells which matrices are singular");
  const int32_t one[] = {1};
  EXPECT_EQ(CheckInverseInfo({4, 4}, one).message().substr(0, 34), "the matrix input[:, :] is singular");
  InverseParams p;
  EXPECT_TRUE(MakeInverseParams(0, &p).ok());
  EXPECT_FALSE(p.check_errors);
}

// The CUDA kernel (kernels/cuda/inverse.cu) on one matrix, on the host, phase by phase: the pivot of
// each step searched by 32 lanes (each its rows k + lane, k + lane + 32, ...) and combined over 5
// butterfly levels of shared::BetterPivot, as __shfl_xor_sync does (each level reads the lanes'
// candidates from before it); the swap, the multipliers and the trailing update; then each column
// of X = P I solved down by one thread.
// With nan_if_singular (check_errors = 1, where the CPU op reports the error and the GPU does not
// wait to) a singular matrix's inverse is written as NaN.
void DeviceInvert(const float* in, int64_t m, float* out, int32_t* info, bool nan_if_singular = false) {
  const int64_t s = m + 1;
  std::vector<float> a(m * s), x(m * m);
  std::vector<int32_t> perm(m);
  for (int64_t e = 0; e < m * m; ++e) a[(e / m) * s + e % m] = in[e];
  for (int64_t i = 0; i < m; ++i) perm[i] = static_cast<int32_t>(i);
  *info = 0;
  for (int32_t k = 0; k < m; ++k) {
    int32_t p = k;
    if (!std::isnan(a[k * s + k])) {
      shared::PivotCandidate lanes[32];
      for (int32_t lane = 0; lane < 32; ++lane) {
        lanes[lane] = {-2.0f, INT32_MAX};
        for (int32_t r = k + lane; r < m; r += 32) {
          lanes[lane] = shared::BetterPivot(lanes[lane], shared::MakePivotCandidate(a[r * s + k], r, k));
        }
      }
      for (int d = 16; d > 0; d /= 2) {
        shared::PivotCandidate next[32];
        for (int lane = 0; lane < 32; ++lane) next[lane] = shared::BetterPivot(lanes[lane], lanes[lane ^ d]);
        std::copy(next, next + 32, lanes);
      }
      p = lanes[0].row;
    }
    if (p != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[k * s + c], a[p * s + c]);
      std::swap(perm[k], perm[p]);
    }
    const float pivot = a[k * s + k];
    if (pivot == 0.0f && *info == 0) *info = k + 1;
    const float reciprocal = 1.0f / pivot;
    for (int64_t i = k + 1; i < m; ++i) a[i * s + k] = shared::InverseMultiplier(a[i * s + k], pivot, reciprocal);
    for (int64_t i = k + 1; i < m; ++i) {
      for (int64_t c = k + 1; c < m; ++c) a[i * s + c] -= a[i * s + k] * a[k * s + c];
    }
  }
  for (int64_t c = 0; c < m; ++c) {
    shared::SolveInverseColumn(a.data(), static_cast<int>(s), perm.data(), static_cast<int>(m), static_cast<int>(c),
                               x.data());
  }
  if (nan_if_singular && *info != 0) std::fill(x.begin(), x.end(), std::numeric_limits<float>::quiet_NaN());
  std::copy(x.begin(), x.end(), out);
}

// The GPU's inverses and info are the CPU kernel's bits, on both CPU paths (order <= 8 and above),
// for well-conditioned, pivoting, singular, NaN, infinite, tie-heavy (pivot magnitudes equal across
// rows and in opposite signs: the first row must win) and subnormal-pivot matrices.
TEST(InverseDeviceCode, MatchesTheCpuKernelBitForBit) {
  for (int64_t m : {1, 2, 3, 4, 5, 8, 9, 16, 17, 33, 40, 70}) {
    std::vector<float> all = RandomMatrices(3, m, 0.0f, static_cast<unsigned>(m));
    const auto pivoting = PivotingMatrices(2, m, static_cast<unsigned>(m + 1));
    all.insert(all.end(), pivoting.begin(), pivoting.end());
    std::vector<float> ties(m * m);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) ties[i * m + j] = static_cast<float>(((i * 7 + j * 3) % 5) - 2) * ((i % 2) ? 1 : -1);
    }
    all.insert(all.end(), ties.begin(), ties.end());
    std::vector<float> zero(m * m, 0.0f);
    all.insert(all.end(), zero.begin(), zero.end());
    auto nan = RandomMatrices(1, m, 2.0f, 11);
    nan[(m - 1) * m] = std::numeric_limits<float>::quiet_NaN();  // below the first pivot
    all.insert(all.end(), nan.begin(), nan.end());
    auto nan_diagonal = RandomMatrices(1, m, 2.0f, 12);
    nan_diagonal[0] = std::numeric_limits<float>::quiet_NaN();
    all.insert(all.end(), nan_diagonal.begin(), nan_diagonal.end());
    auto infinite = RandomMatrices(1, m, 2.0f, 13);
    infinite[m * m / 2] = std::numeric_limits<float>::infinity();
    all.insert(all.end(), infinite.begin(), infinite.end());
    auto tiny = RandomMatrices(1, m, 0.0f, 14);
    for (auto& v : tiny) v *= 1e-39f;  // subnormal: the multipliers divide instead of multiplying
    all.insert(all.end(), tiny.begin(), tiny.end());
    const int64_t batch = static_cast<int64_t>(all.size()) / (m * m);
    const Result cpu = Invert(all, m);
    std::vector<float> device(all.size());
    std::vector<int32_t> device_info(batch);
    for (int64_t b = 0; b < batch; ++b) DeviceInvert(all.data() + b * m * m, m, device.data() + b * m * m, &device_info[b]);
    EXPECT_EQ(0, std::memcmp(device.data(), cpu.inverse.data(), device.size() * sizeof(float))) << "order " << m;
    EXPECT_EQ(device_info, cpu.info) << "order " << m;
  }
}

// check_errors = 1 on the GPU: the singular matrices (a zero matrix, a zero row, a zero column) come
// out all NaN with their info, every other one the CPU kernel's bits.
TEST(InverseDeviceCode, SingularMatricesAreNanWhereTheCpuOpReportsThem) {
  for (int64_t m : {3, 4, 17, 40}) {
    std::vector<float> all = RandomMatrices(2, m, 0.0f, static_cast<unsigned>(m));
    std::vector<float> zero(m * m, 0.0f);
    all.insert(all.end(), zero.begin(), zero.end());
    auto zero_row = RandomMatrices(1, m, 0.0f, 21);
    std::fill(zero_row.begin() + m, zero_row.begin() + 2 * m, 0.0f);
    all.insert(all.end(), zero_row.begin(), zero_row.end());
    auto zero_column = RandomMatrices(1, m, 0.0f, 22);  // stays zero through every update: a zero pivot
    for (int64_t i = 0; i < m; ++i) zero_column[i * m + m / 2] = 0.0f;
    all.insert(all.end(), zero_column.begin(), zero_column.end());
    const int64_t batch = static_cast<int64_t>(all.size()) / (m * m);
    const Result cpu = Invert(all, m);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<float> device(m * m);
      int32_t info = -1;
      DeviceInvert(all.data() + b * m * m, m, device.data(), &info, true);
      EXPECT_EQ(info, cpu.info[b]) << "order " << m << ", matrix " << b;
      if (cpu.info[b] != 0) {
        EXPECT_TRUE(std::all_of(device.begin(), device.end(), [](float v) { return std::isnan(v); }))
            << "order " << m << ", matrix " << b;
      } else {
        EXPECT_EQ(0, std::memcmp(device.data(), cpu.inverse.data() + b * m * m, device.size() * sizeof(float)))
            << "order " << m << ", matrix " << b;
      }
    }
    EXPECT_EQ(std::count_if(cpu.info.begin(), cpu.info.end(), [](int32_t i) { return i != 0; }), 3) << "order " << m;
  }
}

}  // namespace
}  // namespace opbridge
