// Scaled dot-product attention kernel tests: against the formula in double, with and without a
// mask (shared and batched), serial and threaded (bit-identical); the shape checks. The sweeps
// through ORT against PyTorch are in tests/python/test_scaled_dot_product_attention.py.
#include "kernels/cpu/scaled_dot_product_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/shared/exp_polynomial.h"
#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

void Check(int64_t b, int64_t nt, int64_t ns, int64_t e, int mask_kind) {
  std::mt19937 rng(static_cast<uint32_t>(b * 1000 + nt * 10 + ns));
  std::normal_distribution<float> normal;
  std::vector<float> q(b * nt * e), k(b * ns * e), v(b * ns * e), mask(mask_kind == 2 ? b * nt * ns : nt * ns);
  for (auto* t : {&q, &k, &v, &mask}) {
    for (auto& x : *t) x = normal(rng);
  }
  AttentionSizes s;
  const Shape mask_shape = mask_kind == 2 ? Shape{b, nt, ns} : Shape{nt, ns};
  ASSERT_TRUE(CheckAttentionShapes({b, nt, e}, {b, ns, e}, {b, ns, e}, mask_kind != 0, mask_shape, &s).ok());
  std::vector<float> out(b * nt * e), attn(b * nt * ns), out2(out.size()), attn2(attn.size());
  const float* m = mask_kind == 0 ? nullptr : mask.data();
  HeapScratchAllocator scratch;
  ASSERT_TRUE(cpu::ScaledDotProductAttention(q.data(), k.data(), v.data(), m, s, out.data(), attn.data(), scratch,
                                             SerialTaskRunner()).ok());
  ASSERT_TRUE(cpu::ScaledDotProductAttention(q.data(), k.data(), v.data(), m, s, out2.data(), attn2.data(), scratch,
                                             testing::ThreadedTaskRunner(3)).ok());
  EXPECT_EQ(out, out2);
  EXPECT_EQ(attn, attn2);
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t i = 0; i < nt; ++i) {
      std::vector<double> p(ns);
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < ns; ++j) {
        double d = 0;
        for (int64_t x = 0; x < e; ++x) d += double(q[(bi * nt + i) * e + x]) * k[(bi * ns + j) * e + x];
        d /= std::sqrt(double(e));
        if (mask_kind == 1) d += mask[i * ns + j];
        if (mask_kind == 2) d += mask[(bi * nt + i) * ns + j];
        p[j] = d;
        max = std::max(max, d);
      }
      for (auto& x : p) sum += (x = std::exp(x - max));
      for (int64_t j = 0; j < ns; ++j) {
        ASSERT_NEAR(attn[(bi * nt + i) * ns + j], p[j] / sum, 1e-6);
      }
      for (int64_t x = 0; x < e; ++x) {
        double o = 0;
        for (int64_t j = 0; j < ns; ++j) o += p[j] / sum * v[(bi * ns + j) * e + x];
        ASSERT_NEAR(out[(bi * nt + i) * e + x], o, 1e-5);
      }
    }
  }
}

TEST(ScaledDotProductAttentionKernel, MatchesTheFormula) {
  for (int mask_kind : {0, 1, 2}) {
    Check(2, 5, 7, 4, mask_kind);
    Check(3, 33, 20, 32, mask_kind);
    Check(1, 1, 1, 1, mask_kind);
    Check(2, 130, 300, 32, mask_kind);  // several blocks of rows, partial GEMM panels and lanes
    Check(1, 7, 1100, 3, mask_kind);    // more than one GEMM depth block of keys in attn v
  }
}

// The softmax's exp, both forms: within 1 ulp of exp over its domain (1.01 for the fused form),
// exact at 0, 0 below -87 and at -inf, NaN for NaN. The fused form is built here with whatever
// FMA this CPU has or glibc's fmaf, which round alike (IEEE fused multiply-add).
template <float (*Exp)(float)>
void CheckExp(double max_ulp) {
  double worst = 0;
  for (float x = 0.0f; x > -87.0f; x = std::nextafter(x, -INFINITY) - 1e-4f) {
    const double exact = std::exp(double(x));
    const double ulp = std::nextafter(float(exact), INFINITY) - float(exact);
    worst = std::max(worst, std::abs(Exp(x) - exact) / ulp);
  }
  EXPECT_LE(worst, max_ulp);
  EXPECT_EQ(Exp(0.0f), 1.0f);
  EXPECT_EQ(Exp(-0.0f), 1.0f);
  EXPECT_EQ(Exp(-87.5f), 0.0f);
  EXPECT_EQ(Exp(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(Exp(NAN)));
}

TEST(ScaledDotProductAttentionKernel, ExpNonPositiveIsWithinOneUlp) {
  CheckExp<shared::ExpNonPositive>(1.0);
  CheckExp<shared::ExpNonPositiveFused>(1.02);
}

// The softmax at every x86-64 level this CPU runs: v3 and v4 give the same bits (both fuse the
// exp's multiply-adds; the sum's lanes are fixed), v2 (the last variant) agrees with them within
// 4 ulp (its exp rounds each step), including masks, -inf, NaN and row lengths around the vector
// widths.
TEST(ScaledDotProductAttentionKernel, SoftmaxAgreesAcrossCpuLevels) {
  cpu::detail::AttentionSoftmax variants[3];
  const int count = cpu::detail::AttentionSoftmaxVariants(variants, 3);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 20.0f);
  for (int64_t keys : {1, 3, 15, 16, 17, 63, 64, 65, 900}) {
    const int64_t rows = 5;
    std::vector<float> scores(rows * keys), mask(rows * keys);
    for (float& x : scores) x = normal(rng);
    for (float& x : mask) x = normal(rng);
    mask[0] = -INFINITY;
    scores[keys] = NAN;  // row 1
    for (int64_t j = 0; j < keys; ++j) mask[2 * keys + j] = -INFINITY;  // row 2: all -inf
    std::vector<float> first;
    for (int v = 0; v < count; ++v) {
      std::vector<float> work = scores, attn(rows * keys);
      variants[v](work.data(), rows, keys, keys, mask.data(), attn.data());
      EXPECT_TRUE(std::isnan(attn[keys])) << "variant " << v << " keys " << keys;
      EXPECT_TRUE(std::isnan(attn[2 * keys])) << "variant " << v << " keys " << keys;
      // Rows further apart than keys (the kernel pads them to the GEMM's panel): what lies between
      // them is not read.
      const int64_t stride = keys + 7;
      std::vector<float> padded(rows * stride, NAN), padded_attn(rows * keys);
      for (int64_t r = 0; r < rows; ++r) std::copy_n(scores.data() + r * keys, keys, padded.data() + r * stride);
      variants[v](padded.data(), rows, keys, stride, mask.data(), padded_attn.data());
      ASSERT_EQ(std::memcmp(attn.data(), padded_attn.data(), attn.size() * sizeof(float)), 0)
          << "variant " << v << " keys " << keys;
      if (v == 0) {
        first = attn;
      } else if (v < count - 1) {  // a fused variant
        ASSERT_EQ(std::memcmp(attn.data(), first.data(), attn.size() * sizeof(float)), 0)
            << "variant " << v << " keys " << keys;
      } else {  // x86-64-v2
        for (size_t i = 0; i < attn.size(); ++i) {
          if (std::isnan(first[i])) {
            EXPECT_TRUE(std::isnan(attn[i])) << i;
          } else {
            EXPECT_LE(std::abs(attn[i] - first[i]), 4 * std::numeric_limits<float>::epsilon() * first[i])
                << "keys " << keys << " element " << i;
          }
        }
      }
    }
  }
}

TEST(ScaledDotProductAttentionChecks, Shapes) {
  AttentionSizes s;
  EXPECT_TRUE(CheckAttentionShapes({2, 3, 4}, {2, 5, 4}, {2, 5, 6}, false, {}, &s).ok());
  EXPECT_EQ(s.value, 6);
  EXPECT_FALSE(CheckAttentionShapes({2, 3}, {2, 5, 4}, {2, 5, 4}, false, {}, &s).ok());
  EXPECT_FALSE(CheckAttentionShapes({2, 3, 4}, {2, 5, 3}, {2, 5, 4}, false, {}, &s).ok());
  EXPECT_FALSE(CheckAttentionShapes({2, 3, 4}, {2, 5, 4}, {2, 6, 4}, false, {}, &s).ok());
  EXPECT_FALSE(CheckAttentionShapes({2, 3, 4}, {2, 5, 4}, {2, 5, 4}, true, {3, 4}, &s).ok());
  EXPECT_TRUE(CheckAttentionShapes({2, 3, 4}, {2, 5, 4}, {2, 5, 4}, true, {2, 3, 5}, &s).ok());
  EXPECT_TRUE(s.mask_batched);
}

// The CUDA kernel's arithmetic (kernels/cuda/scaled_dot_product_attention.cu) on the host: every
// score and output one fmaf chain from 0 in order (chain_gemm.cuh), q divided by the rounded root
// first, the mask added after the chain; the softmax as half a warp runs it: lane l of 16 takes
// elements l, l + 16, ... in order for the maximum and the sum of the fused exp, the lanes' sums
// added as __shfl_down_sync's tree (lane l + width into lane l), then each weight times 1 / sum.
void DeviceAttention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                     const float* mask, const AttentionSizes& s, std::vector<float>& out, std::vector<float>& attn) {
  const float root = static_cast<float>(std::sqrt(static_cast<double>(s.embed)));
  for (int64_t z = 0; z < s.batch; ++z) {
    for (int64_t i = 0; i < s.queries; ++i) {
      const int64_t row = z * s.queries + i;
      float* a = attn.data() + row * s.keys;
      for (int64_t j = 0; j < s.keys; ++j) {
        float sum = 0.0f;
        for (int64_t e = 0; e < s.embed; ++e) sum = std::fma(q[row * s.embed + e] / root, k[(z * s.keys + j) * s.embed + e], sum);
        if (mask != nullptr) sum += mask[(s.mask_batched ? row : i) * s.keys + j];
        a[j] = sum;
      }
      float lane_max[16], lane_sum[16];
      for (int l = 0; l < 16; ++l) {
        lane_max[l] = -INFINITY;
        for (int64_t j = l; j < s.keys; j += 16) lane_max[l] = a[j] > lane_max[l] ? a[j] : lane_max[l];
      }
      for (int width = 8; width > 0; width /= 2) {  // __shfl_xor_sync: every lane reads the others' before
        float next[16];
        for (int l = 0; l < 16; ++l) next[l] = lane_max[l ^ width] > lane_max[l] ? lane_max[l ^ width] : lane_max[l];
        std::copy(next, next + 16, lane_max);
      }
      for (int l = 0; l < 16; ++l) {
        lane_sum[l] = 0.0f;
        for (int64_t j = l; j < s.keys; j += 16) {
          a[j] = shared::ExpNonPositiveFused(a[j] - lane_max[l]);
          lane_sum[l] += a[j];
        }
      }
      for (int width = 8; width > 0; width /= 2) {
        for (int l = 0; l < width; ++l) lane_sum[l] += lane_sum[l + width];
      }
      const float scale = 1.0f / lane_sum[0];
      for (int64_t j = 0; j < s.keys; ++j) a[j] *= scale;
      for (int64_t c = 0; c < s.value; ++c) {
        float sum = 0.0f;
        for (int64_t j = 0; j < s.keys; ++j) sum = std::fma(a[j], v[(z * s.keys + j) * s.value + c], sum);
        out[row * s.value + c] = sum;
      }
    }
  }
}

// The GPU's arithmetic against the CPU kernel: on a CPU with FMA (x86-64-v3 or v4: the CPU kernel's
// fused chains and exp) the same bits; on an x86-64-v2 CPU (each product rounded) the same NaN places
// and values within a few ulps. Masks shared and batched, a row masked to -inf everywhere (NaN), a
// NaN score, a key count that is no multiple of 16, Ev != E.
TEST(ScaledDotProductAttentionDeviceCode, MatchesTheCpuKernelsArithmetic) {
  struct Case {
    int64_t b, nt, ns, e, ev;
    int mask_kind;
  };
  for (const Case& c : {Case{2, 13, 37, 32, 32, 0}, Case{3, 20, 45, 8, 5, 1}, Case{1, 7, 300, 17, 40, 2},
                        Case{2, 1, 1, 3, 2, 1}}) {
    std::mt19937 rng(static_cast<uint32_t>(c.ns));
    std::normal_distribution<float> normal;
    std::vector<float> q(c.b * c.nt * c.e), k(c.b * c.ns * c.e), v(c.b * c.ns * c.ev);
    std::vector<float> mask(c.mask_kind == 2 ? c.b * c.nt * c.ns : c.nt * c.ns);
    for (auto* t : {&q, &k, &v, &mask}) {
      for (auto& x : *t) x = 3.0f * normal(rng);
    }
    if (c.mask_kind != 0) {
      for (int64_t j = 0; j < c.ns; ++j) mask[j] = -INFINITY;  // query 0 masked everywhere
    }
    q.back() = std::numeric_limits<float>::quiet_NaN();
    AttentionSizes s;
    const Shape mask_shape = c.mask_kind == 2 ? Shape{c.b, c.nt, c.ns} : Shape{c.nt, c.ns};
    ASSERT_TRUE(CheckAttentionShapes({c.b, c.nt, c.e}, {c.b, c.ns, c.e}, {c.b, c.ns, c.ev}, c.mask_kind != 0,
                                     mask_shape, &s).ok());
    const float* m = c.mask_kind == 0 ? nullptr : mask.data();
    std::vector<float> out(c.b * c.nt * c.ev), attn(c.b * c.nt * c.ns), device_out(out.size()),
        device_attn(attn.size());
    HeapScratchAllocator scratch;
    ASSERT_TRUE(cpu::ScaledDotProductAttention(q.data(), k.data(), v.data(), m, s, out.data(), attn.data(), scratch,
                                               SerialTaskRunner()).ok());
    DeviceAttention(q, k, v, m, s, device_out, device_attn);
    testing::ExpectGpuArithmeticMatchesCpu(attn, device_attn, 1e-6f, "attn");
    testing::ExpectGpuArithmeticMatchesCpu(out, device_out, 1e-5f, "out");
  }
}

}  // namespace
}  // namespace opbridge
