// PackedGemm (the deformable convolution's matrix product), every variant this CPU can run,
// against a float64 reference: shapes that are and are not multiples of the micro-tile, the
// panel and the depth block, with and without bias, and NaN propagation.
#include "kernels/cpu/packed_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace opbridge {
namespace {

struct Case {
  int64_t m, n, k;
  bool bias;
};

std::vector<const cpu::PackedGemm*> Variants() {
  const cpu::PackedGemm* v[3];
  const int count = cpu::PackedGemmVariants(v, 3);
  return {v, v + count};
}

// out[o][p] for p < n, written with row stride ldo > n so that writes past a row are caught.
std::vector<float> Multiply(const cpu::PackedGemm& gemm, const Case& c, const std::vector<float>& weights,
                       const std::vector<float>& columns, const std::vector<float>& bias, int64_t ldo) {
  std::vector<float> packed(gemm.packed_size(c.m, c.k), -7.0f), scratch(gemm.scratch_size(c.m, c.n) + 1);
  gemm.pack_weights(c.m, c.k, weights.data(), c.k, packed.data());
  std::vector<float> out(c.m * ldo, -5.0f);
  gemm.multiply(c.m, c.n, c.k, packed.data(), columns.data(), c.k, c.bias ? bias.data() : nullptr, out.data(), ldo,
                scratch.data());
  return out;
}

TEST(PackedGemm, MatchesFloat64ReferenceForEveryVariant) {
  const std::vector<Case> cases = {
      {1, 1, 1, false},     {8, 1024, 27, true},  {32, 100, 288, true}, {256, 108, 2304, true},
      {33, 13, 257, false}, {17, 7, 513, true},   {64, 25, 1, true},    {5, 3, 600, false},
  };
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Case& c : cases) {
    std::vector<float> weights(c.m * c.k), columns(c.n * c.k), bias(c.m);
    for (float& x : weights) x = u(rng);
    for (float& x : columns) x = u(rng);
    for (float& x : bias) x = u(rng);
    const int64_t ldo = c.n + 3;
    for (const cpu::PackedGemm* gemm : Variants()) {
      const auto out = Multiply(*gemm, c, weights, columns, bias, ldo);
      const std::string where = std::string(gemm->name) + " m=" + std::to_string(c.m) + " n=" +
                                std::to_string(c.n) + " k=" + std::to_string(c.k);
      for (int64_t o = 0; o < c.m; ++o) {
        for (int64_t p = 0; p < c.n; ++p) {
          double expected = c.bias ? bias[o] : 0.0;
          for (int64_t kk = 0; kk < c.k; ++kk) expected += double(weights[o * c.k + kk]) * columns[p * c.k + kk];
          // float32 sums of k products of magnitude <= 1: error grows like sqrt(k) * eps.
          ASSERT_NEAR(out[o * ldo + p], expected, 2e-6 * (1 + std::sqrt(double(c.k)) * 4)) << where;
        }
        for (int64_t p = c.n; p < ldo; ++p) ASSERT_EQ(out[o * ldo + p], -5.0f) << where << ": wrote past a row";
      }
    }
  }
}

// Each sum is one chain of fused multiply-adds in k order, so the variants with FMA agree to the
// bit, and the result does not depend on where a pixel falls in the micro-tile.
TEST(PackedGemm, FmaVariantsAgreeBitForBitAndPixelsAreIndependent) {
  const Case c{40, 29, 700, true};
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> weights(c.m * c.k), columns(c.n * c.k), bias(c.m);
  for (float& x : weights) x = u(rng);
  for (float& x : columns) x = u(rng);
  for (float& x : bias) x = u(rng);
  const auto variants = Variants();
  const auto first = Multiply(*variants[0], c, weights, columns, bias, c.n);
  for (const cpu::PackedGemm* gemm : variants) {
    if (std::string(gemm->name).find("no FMA") != std::string::npos) continue;
    EXPECT_EQ(Multiply(*gemm, c, weights, columns, bias, c.n), first) << gemm->name;
  }
  // The last pixel alone gives the same value as in the full product.
  const Case one{c.m, 1, c.k, true};
  const std::vector<float> last(columns.end() - c.k, columns.end());
  const auto alone = Multiply(*variants[0], one, weights, last, bias, 1);
  for (int64_t o = 0; o < c.m; ++o) EXPECT_EQ(alone[o], first[o * c.n + c.n - 1]);
}

TEST(PackedGemm, NaNInAColumnReachesOnlyThatPixel) {
  const Case c{20, 15, 300, false};
  std::vector<float> weights(c.m * c.k, 0.5f), columns(c.n * c.k, 1.0f), bias;
  columns[7 * c.k + 123] = std::numeric_limits<float>::quiet_NaN();
  for (const cpu::PackedGemm* gemm : Variants()) {
    const auto out = Multiply(*gemm, c, weights, columns, bias, c.n);
    for (int64_t o = 0; o < c.m; ++o) {
      for (int64_t p = 0; p < c.n; ++p) {
        if (p == 7) {
          EXPECT_TRUE(std::isnan(out[o * c.n + p])) << gemm->name;
        } else {
          EXPECT_EQ(out[o * c.n + p], 150.0f) << gemm->name;
        }
      }
    }
  }
}

// multiply_rows: the same sums as multiply, transposed into rows of stride ldo > m (nothing
// written past a row's m values), for full and partial panels and several depth blocks.
TEST(PackedGemm, MultiplyRowsIsMultiplyTransposed) {
  for (const Case& c : {Case{900, 30, 32, false}, Case{32, 25, 900, false}, Case{5, 13, 3, false}}) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> weights(c.m * c.k), columns(c.n * c.k), bias;
    for (float& x : weights) x = u(rng);
    for (float& x : columns) x = u(rng);
    for (const cpu::PackedGemm* gemm : Variants()) {
      const auto by_channel = Multiply(*gemm, c, weights, columns, bias, c.n);
      std::vector<float> packed(gemm->packed_size(c.m, c.k));
      gemm->pack_weights(c.m, c.k, weights.data(), c.k, packed.data());
      const int64_t ldo = c.m + 5;
      std::vector<float> rows(c.n * ldo, -5.0f);
      gemm->multiply_rows(c.m, c.n, c.k, packed.data(), columns.data(), c.k, rows.data(), ldo);
      for (int64_t p = 0; p < c.n; ++p) {
        for (int64_t o = 0; o < c.m; ++o) ASSERT_EQ(rows[p * ldo + o], by_channel[o * c.n + p]) << gemm->name;
        for (int64_t o = c.m; o < ldo; ++o) ASSERT_EQ(rows[p * ldo + o], -5.0f) << gemm->name << ": wrote past a row";
      }
    }
  }
}

// pack_weights_transposed packs weights given as [k][o] exactly as pack_weights packs [o][k].
TEST(PackedGemm, PackingTheTransposeIsTheSame) {
  for (const Case& c : {Case{32, 0, 900, false}, Case{33, 0, 257, false}, Case{5, 0, 3, false}}) {
    std::mt19937 rng(6);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const int64_t ldt = c.m + 3;
    std::vector<float> weights(c.m * c.k), transposed(c.k * ldt, 9.0f);
    for (int64_t o = 0; o < c.m; ++o) {
      for (int64_t kk = 0; kk < c.k; ++kk) transposed[kk * ldt + o] = weights[o * c.k + kk] = u(rng);
    }
    for (const cpu::PackedGemm* gemm : Variants()) {
      std::vector<float> packed(gemm->packed_size(c.m, c.k), -7.0f), from_transposed(packed.size(), -8.0f);
      gemm->pack_weights(c.m, c.k, weights.data(), c.k, packed.data());
      gemm->pack_weights_transposed(c.m, c.k, transposed.data(), ldt, from_transposed.data());
      EXPECT_EQ(packed, from_transposed) << gemm->name;
    }
  }
}

// The variant chosen is the best this CPU runs; under ./run.sh test's emulated CPUs,
// OPBRIDGE_EXPECT_CPU_LEVEL names the level it must be.
TEST(PackedGemm, ChosenVariantIsTheBestThisCpuRuns) {
  const auto variants = Variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_EQ(&cpu::PackedGemmForThisCpu(), variants[0]);
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const std::string expected = v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : "x86-64-v2";
#else
  const std::string expected = "aarch64 (NEON, FMA)";
#endif
  EXPECT_NE(std::string(variants[0]->name).find(expected), std::string::npos) << variants[0]->name;
  if (const char* level = std::getenv("OPBRIDGE_EXPECT_CPU_LEVEL")) {
    EXPECT_NE(std::string(variants[0]->name).find(level), std::string::npos) << variants[0]->name;
  }
}

}  // namespace
}  // namespace opbridge
