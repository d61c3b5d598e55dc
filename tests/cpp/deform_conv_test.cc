// Deformable convolution kernel tests against closed-form answers. The sweeps against
// torchvision.ops.deform_conv2d are in tests/python/test_deform_conv.py.
#include "kernels/cpu/deform_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/shared/deform_conv_columns.h"
#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

struct Problem {
  int64_t n, c, h, w, c_out, kh, kw;
  DeformConvParams params;
  std::vector<float> input, offset, mask, weight, bias;
  int64_t out_h, out_w;
};

Problem MakeProblem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t c_out, int64_t k, DeformConvParams p, unsigned seed) {
  Problem pr{n, c, h, w, c_out, k, k, p, {}, {}, {}, {}, {}, 0, 0};
  pr.out_h = (h + 2 * p.pad_h - p.dilation_h * (k - 1) - 1) / p.stride_h + 1;
  pr.out_w = (w + 2 * p.pad_w - p.dilation_w * (k - 1) - 1) / p.stride_w + 1;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto fill = [&](std::vector<float>& v, size_t size) { v.resize(size); for (float& x : v) x = nd(rng); };
  fill(pr.input, n * c * h * w);
  fill(pr.offset, n * 2 * p.deform_groups * k * k * pr.out_h * pr.out_w);
  fill(pr.mask, n * p.deform_groups * k * k * pr.out_h * pr.out_w);
  fill(pr.weight, c_out * (c / p.groups) * k * k);
  fill(pr.bias, c_out);
  return pr;
}

std::vector<float> RunDcn(const Problem& pr, bool with_mask, const TaskRunner& runner) {
  std::vector<float> out(pr.n * pr.c_out * pr.out_h * pr.out_w);
  DeformConvArgs a{pr.input.data(), pr.offset.data(), with_mask ? pr.mask.data() : nullptr, pr.weight.data(),
                        pr.bias.data(), out.data(), pr.n, pr.c, pr.h, pr.w, pr.c_out, pr.kh, pr.kw, pr.out_h, pr.out_w};
  HeapScratchAllocator heap;
  Status s = cpu::DeformConv(pr.params, a, heap, runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// With zero offsets and no mask, a deformable convolution is an ordinary convolution.
TEST(DeformConv, ZeroOffsetsGiveAPlainConvolution) {
  DeformConvParams p;
  p.pad_h = p.pad_w = 1;
  p.groups = 2;
  Problem pr = MakeProblem(1, 4, 5, 6, 2, 3, p, 1);
  std::fill(pr.offset.begin(), pr.offset.end(), 0.0f);
  const auto out = RunDcn(pr, false, SerialTaskRunner());
  for (int64_t o = 0; o < 2; ++o) {
    const int64_t g = o;  // one output channel per group
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t x = 0; x < 6; ++x) {
        double expected = pr.bias[o];
        for (int64_t cl = 0; cl < 2; ++cl)
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t yy = y - 1 + i, xx = x - 1 + j;
              if (yy < 0 || yy >= 5 || xx < 0 || xx >= 6) continue;
              expected += pr.weight[((o * 2 + cl) * 3 + i) * 3 + j] * pr.input[((g * 2 + cl) * 5 + yy) * 6 + xx];
            }
        EXPECT_NEAR(out[(o * 5 + y) * 6 + x], expected, 1e-4);
      }
  }
}

// torchvision's bilinear_interpolate, in float64 (the sample position itself is float32, as in
// the kernel and in torchvision).
double Bilinear(const float* plane, int64_t h, int64_t w, float y, float x) {
  if (y <= -1 || h <= y || x <= -1 || w <= x) return 0.0;
  const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
  const double ly = y - y0, lx = x - x0;
  auto at = [&](int64_t yy, int64_t xx) { return yy >= 0 && yy < h && xx >= 0 && xx < w ? plane[yy * w + xx] : 0.0; };
  return (1 - ly) * (1 - lx) * at(y0, x0) + (1 - ly) * lx * at(y0, x0 + 1) + ly * (1 - lx) * at(y0 + 1, x0) +
         ly * lx * at(y0 + 1, x0 + 1);
}

// Deformable convolution written from the spec (compat_ops.md and torchvision), float64 sums.
std::vector<double> ReferenceDcn(const Problem& pr, bool with_mask) {
  const DeformConvParams& p = pr.params;
  const int64_t cg = pr.c / p.groups, og = pr.c_out / p.groups, cd = pr.c / p.deform_groups;
  const int64_t taps = pr.kh * pr.kw, pixels = pr.out_h * pr.out_w;
  std::vector<double> out(pr.n * pr.c_out * pixels);
  for (int64_t n = 0; n < pr.n; ++n)
    for (int64_t o = 0; o < pr.c_out; ++o)
      for (int64_t oy = 0; oy < pr.out_h; ++oy)
        for (int64_t ox = 0; ox < pr.out_w; ++ox) {
          const int64_t g = o / og, pix = oy * pr.out_w + ox;
          double sum = pr.bias[o];
          for (int64_t cl = 0; cl < cg; ++cl) {
            const int64_t c = g * cg + cl, dg = c / cd;
            for (int64_t k = 0; k < taps; ++k) {
              const int64_t i = k / pr.kw, j = k % pr.kw;
              const float* off = pr.offset.data() + ((n * p.deform_groups + dg) * 2 * taps + 2 * k) * pixels;
              const float y = static_cast<float>(oy * p.stride_h - p.pad_h + i * p.dilation_h) + off[pix];
              const float x = static_cast<float>(ox * p.stride_w - p.pad_w + j * p.dilation_w) + off[pixels + pix];
              double v = Bilinear(pr.input.data() + (n * pr.c + c) * pr.h * pr.w, pr.h, pr.w, y, x);
              if (with_mask) v *= pr.mask[((n * p.deform_groups + dg) * taps + k) * pixels + pix];
              sum += v * pr.weight[(o * cg + cl) * taps + k];
            }
          }
          out[(n * pr.c_out + o) * pixels + pix] = sum;
        }
  return out;
}

// Random offsets (many samples outside the map), groups and deform groups together, non-square
// stride, padding and dilation, channel counts that are and are not vector widths.
TEST(DeformConv, MatchesAFloat64ReferenceWrittenFromTheSpec) {
  struct Config {
    int64_t n, c, h, w, c_out, k, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, dgroups;
  };
  for (const Config& f : {Config{2, 6, 9, 11, 4, 3, 2, 1, 1, 2, 1, 2, 2, 3}, Config{1, 40, 13, 7, 35, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                          Config{1, 3, 6, 6, 8, 5, 1, 1, 2, 2, 1, 1, 1, 1}, Config{1, 32, 5, 9, 16, 1, 1, 1, 0, 0, 1, 1, 2, 4}}) {
    DeformConvParams p;
    p.stride_h = f.stride_h, p.stride_w = f.stride_w, p.pad_h = f.pad_h, p.pad_w = f.pad_w;
    p.dilation_h = f.dil_h, p.dilation_w = f.dil_w, p.groups = f.groups, p.deform_groups = f.dgroups;
    Problem pr = MakeProblem(f.n, f.c, f.h, f.w, f.c_out, f.k, p, 3);
    for (float& o : pr.offset) o *= 2.5f;
    for (bool mask : {false, true}) {
      const auto out = RunDcn(pr, mask, SerialTaskRunner());
      const auto expected = ReferenceDcn(pr, mask);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_NEAR(out[i], expected[i], 1e-4 * (1 + std::abs(expected[i]))) << "config c=" << f.c << " at " << i;
      }
    }
  }
}

TEST(DeformConv, ResultDoesNotDependOnThreads) {
  DeformConvParams p;
  p.pad_h = p.pad_w = 1;
  p.groups = 2;
  p.deform_groups = 4;
  const Problem pr = MakeProblem(2, 8, 23, 29, 6, 3, p, 2);
  for (bool mask : {false, true}) {
    const auto serial = RunDcn(pr, mask, SerialTaskRunner());
    const auto threaded = RunDcn(pr, mask, testing::ThreadedTaskRunner(3));
    ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
  }
}

TEST(DeformConv, RejectsBadShapes) {
  DeformConvParams p;
  p.groups = 2;
  Shape out;
  DeformConvShapes s{{1, 4, 5, 5}, {1, 18, 3, 3}, {2, 1, 3, 3}};
  EXPECT_NE(CheckDeformConvShapes(p, s, &out).message().find("weight.shape[1] * groups"), std::string::npos);
  s.weight = {2, 2, 3, 3};
  s.offset = {1, 9, 3, 3};
  EXPECT_NE(CheckDeformConvShapes(p, s, &out).message().find("offset must have shape"), std::string::npos);
}

// The CUDA kernel (kernels/cuda/deform_conv.cu) on the host, with its own functions
// (kernels/shared/deform_conv_columns.h): the tap kernel's threads over every image of the call,
// then each output of the one product over all images and conv groups (z = image * groups + group)
// as chain_gemm.cuh computes it whatever its tile: one fmaf chain of A(z, o, K) * B(z, K, q) from 0
// over K in order, stored by the epilogue (+ bias).
std::vector<float> DeviceDcn(const Problem& pr, bool with_mask) {
  const DeformConvParams& p = pr.params;
  const shared::DeformGeometry g =
      shared::MakeDeformGeometry(p, pr.c, pr.h, pr.w, pr.c_out, pr.out_h, pr.out_w, pr.kh, pr.kw);
  const int64_t all_taps = pr.n * g.tap_count;
  std::vector<int32_t> y_low(all_taps), x_low(all_taps);
  std::vector<float> weights[4];
  shared::DeformTapArrays taps{y_low.data(), x_low.data(), {}};
  for (int e = 0; e < 4; ++e) {
    weights[e].resize(all_taps);
    taps.w[e] = weights[e].data();
  }
  for (int64_t at = 0; at < all_taps; ++at) shared::WriteDeformTap(pr.offset.data(), p, g, at, taps);
  std::vector<float> out(pr.n * pr.c_out * g.pixels, -1.0f);
  const shared::DeformWeights a{pr.weight.data(), g};
  const shared::DeformSampledColumns b{pr.input.data(), taps, g, with_mask ? pr.mask.data() : nullptr};
  const shared::DeformPlusBias store{out.data(), pr.bias.data(), g};
  const int depth = static_cast<int>(g.c_per_group * g.taps);
  for (int z = 0; z < pr.n * p.groups; ++z) {
    for (int o = 0; o < g.out_per_group; ++o) {
      for (int q = 0; q < g.pixels; ++q) {
        float sum = 0.0f;
        for (int k = 0; k < depth; ++k) sum = std::fma(a(z, o, k), b(z, k, q), sum);
        store(z, o, q, sum);
      }
    }
  }
  return out;
}

// The GPU's arithmetic against the CPU kernel, with and without mask, over groups, deform groups,
// strides, padding, dilation, offsets that leave the map, NaN and infinite inputs and offsets: on a
// CPU with FMA the same bits; on an x86-64-v2 CPU (each product rounded) the same NaN places and
// values within the rounding of K products.
TEST(DeformConvDeviceCode, MatchesTheCpuKernelsArithmetic) {
  DeformConvParams plain;
  DeformConvParams grouped;
  grouped.stride_h = 2;
  grouped.pad_h = 1;
  grouped.pad_w = 2;
  grouped.dilation_w = 2;
  grouped.groups = 2;
  grouped.deform_groups = 4;
  DeformConvParams padded;
  padded.pad_h = padded.pad_w = 1;
  padded.deform_groups = 2;
  struct Case {
    int64_t n, c, h, w, c_out, k;
    DeformConvParams p;
  };
  for (const Case& c : {Case{1, 3, 9, 11, 5, 3, plain}, Case{2, 8, 12, 10, 6, 3, grouped}, Case{1, 4, 7, 7, 3, 1, padded},
                        Case{2, 6, 6, 9, 4, 3, padded}}) {
    Problem pr = MakeProblem(c.n, c.c, c.h, c.w, c.c_out, c.k, c.p, static_cast<unsigned>(c.c * 31 + c.h));
    for (float& v : pr.offset) v *= 3.0f;  // many points leave the map
    pr.input[5] = std::numeric_limits<float>::infinity();
    pr.input[pr.input.size() / 2] = std::numeric_limits<float>::quiet_NaN();
    pr.offset[7] = std::numeric_limits<float>::quiet_NaN();
    for (bool with_mask : {false, true}) {
      const auto cpu = RunDcn(pr, with_mask, SerialTaskRunner());
      const auto device = DeviceDcn(pr, with_mask);
      testing::ExpectGpuArithmeticMatchesCpu(cpu, device, 1e-5f, with_mask ? "with mask" : "without mask");
    }
  }
}

}  // namespace
}  // namespace opbridge
