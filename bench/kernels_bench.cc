// Single-thread microbenchmarks of the CPU kernels at the workloads.md shapes, without ORT.
// For the comparison against ORT's built-ins and PyTorch, use `./run.sh bench`.
//   ./build/opbridge_kernel_bench --benchmark_filter=GridSample
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "eigen_sgemm/eigen_sgemm.h"
#include "kernels/cpu/corner_pool.h"
#include "kernels/cpu/cummax.h"
#include "kernels/cpu/deform_conv.h"
#include "kernels/cpu/grid_sample.h"
#include "kernels/cpu/group_norm.h"
#include "kernels/cpu/inverse.h"
#include "kernels/cpu/multi_scale_deformable_attention.h"
#include "kernels/cpu/packed_gemm.h"
#include "kernels/cpu/roi_align.h"
#include "kernels/cpu/soft_nms.h"

namespace opbridge {
namespace {

std::vector<float> Uniform(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// roi_align.box: [1,256,200,304], 1000 boxes of sides 16..112 px in an 800x1216 image.
void BM_RoiAlignBox(benchmark::State& state) {
  const int64_t c = 256, h = 200, w = 304, r = 1000;
  const auto feature = Uniform(c * h * w, -1, 1, 1);
  const auto u = Uniform(r * 4, 0, 1, 2);
  std::vector<float> rois(r * 5);
  for (int64_t i = 0; i < r; ++i) {
    const float bw = 16 + 96 * u[4 * i], bh = 16 + 96 * u[4 * i + 1];
    const float x1 = (1216 - bw) * u[4 * i + 2], y1 = (800 - bh) * u[4 * i + 3];
    rois[5 * i + 0] = 0;
    rois[5 * i + 1] = x1;
    rois[5 * i + 2] = y1;
    rois[5 * i + 3] = x1 + bw;
    rois[5 * i + 4] = y1 + bh;
  }
  RoiAlignParams p;
  p.output_height = p.output_width = 7;
  p.spatial_scale = 0.25f;
  p.sampling_ratio = state.range(0);
  p.aligned = true;
  std::vector<float> out(r * c * 49);
  for (auto _ : state) {
    cpu::RoiAlign(p, feature.data(), 1, c, h, w, rois.data(), r, out.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_RoiAlignBox)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

// grid_sample.warp: [1,32,256,256], grid [1,256,256,2] uniform in [-1.1, 1.1].
void BM_GridSampleWarp(benchmark::State& state) {
  const int64_t c = 32, h = 256, w = 256;
  const auto input = Uniform(c * h * w, -1, 1, 3);
  const auto grid = Uniform(h * w * 2, -1.1f, 1.1f, 4);
  GridSampleParams p;
  MakeGridSampleParams(state.range(0), state.range(1), 0, &p);
  std::vector<float> out(c * h * w);
  std::vector<char> scratch(cpu::GridSampleScratchBytes());
  for (auto _ : state) {
    cpu::GridSample(p, input.data(), 1, c, h, w, grid.data(), h, w, out.data(), scratch.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_GridSampleWarp)->Args({0, 0})->Args({0, 1})->Args({1, 1})->Args({2, 2})->Unit(benchmark::kMillisecond);

// cummax.rows: [1,128,256,256] along dim 3 (each row a scan) and dim 2 (rows of lanes); arg 1: cummin.
void BM_CumMaxRows(benchmark::State& state) {
  const Shape shape = {1, 128, 256, 256};
  const auto input = Uniform(NumElements(shape), -1, 1, 5);
  std::vector<float> values(input.size());
  std::vector<int64_t> indices(input.size());
  CumMaxParams p;
  p.dim = state.range(0);
  p.extreme = state.range(1) ? Extreme::kMin : Extreme::kMax;
  for (auto _ : state) {
    cpu::CumMax(p, input.data(), shape, values.data(), indices.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(values.data());
  }
}
BENCHMARK(BM_CumMaxRows)->Args({3, 0})->Args({2, 0})->Args({3, 1})->Unit(benchmark::kMillisecond);

// corner_pool: [1,128,128,128], modes 0-3 (top, bottom, left, right).
void BM_CornerPool(benchmark::State& state) {
  const Shape shape = {1, 128, 128, 128};
  const auto input = Uniform(NumElements(shape), -1, 1, 6);
  std::vector<float> output(input.size());
  CornerPoolParams p;
  p.mode = static_cast<CornerPoolMode>(state.range(0));
  for (auto _ : state) {
    cpu::CornerPool(p, input.data(), shape, output.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(output.data());
  }
}
BENCHMARK(BM_CornerPool)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
// norm: [8, 64, 128, 128] in state.range(0) groups (64: instance normalization), epsilon 1e-5.
void BM_GroupNorm(benchmark::State& state) {
  const NormLayout layout{8, 64, 128 * 128};
  const auto input = Uniform(8 * 64 * 128 * 128, -1, 1, 11);
  const auto scale = Uniform(64, -1, 1, 12), bias = Uniform(64, -1, 1, 13);
  std::vector<float> out(input.size());
  for (auto _ : state) {
    cpu::GroupNorm(input.data(), layout, state.range(0), scale.data(), bias.data(), 1e-5f, out.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_GroupNorm)->Arg(64)->Arg(32)->Unit(benchmark::kMillisecond);
// The same in float16 storage (input, scale, bias and output): what converting on read and rounding
// on write cost.
void BM_GroupNormFloat16(benchmark::State& state) {
  const NormLayout layout{8, 64, 128 * 128};
  std::vector<shared::Float16> input(8 * 64 * 128 * 128), scale(64), bias(64), out(input.size());
  const auto values = Uniform(input.size(), -1, 1, 11), scales = Uniform(64, -1, 1, 12), biases = Uniform(64, -1, 1, 13);
  shared::StoreRun(values.data(), static_cast<int64_t>(values.size()), input.data());
  shared::StoreRun(scales.data(), 64, scale.data());
  shared::StoreRun(biases.data(), 64, bias.data());
  for (auto _ : state) {
    cpu::GroupNorm(input.data(), layout, state.range(0), scale.data(), bias.data(), 1e-5f, out.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_GroupNormFloat16)->Arg(64)->Arg(32)->Unit(benchmark::kMillisecond);

// soft_nms.dense: 5000 boxes jittered around 500 centres, uniform scores.
void BM_SoftNmsDense(benchmark::State& state) {
  const int64_t n = 5000;
  const auto centres = Uniform(500 * 2, 0, 1000, 5);
  const auto u = Uniform(n * 5, 0, 1, 6);
  std::vector<float> boxes(n * 4), scores(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(u[5 * i] * 499.99f);
    const float cx = centres[2 * k] + 8 * (u[5 * i + 1] - 0.5f), cy = centres[2 * k + 1] + 8 * (u[5 * i + 2] - 0.5f);
    const float half = 20 + 20 * u[5 * i + 3];
    boxes[4 * i + 0] = cx - half;
    boxes[4 * i + 1] = cy - half;
    boxes[4 * i + 2] = cx + half;
    boxes[4 * i + 3] = cy + half;
    scores[i] = u[5 * i + 4];
  }
  SoftNmsParams p;
  MakeSoftNmsParams(0.3f, 0.5f, 1e-3f, state.range(0), 0, &p);
  std::vector<float> dets(n * 5);
  std::vector<int64_t> inds(n);
  int64_t kept = 0;
  std::vector<int64_t> scratch(cpu::SoftNmsScratchBytes(n) / sizeof(int64_t) + 1);
  for (auto _ : state) {
    cpu::SoftNms(p, boxes.data(), scores.data(), n, scratch.data(), dets.data(), inds.data(), &kept);
    benchmark::DoNotOptimize(kept);
  }
  state.counters["kept"] = static_cast<double>(kept);
}
BENCHMARK(BM_SoftNmsDense)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// The dcn.* workloads: offsets uniform in (-3, 3), mask in (0, 1); Arg(1) with mask, Arg(0) without.
struct DcnShape {
  int64_t batch, channels, height, width, out_channels, kernel;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups, deform_groups;
};

void RunDeformConv(benchmark::State& state, const DcnShape& s) {
  DeformConvParams p;
  p.stride_h = s.stride_h, p.stride_w = s.stride_w, p.pad_h = s.pad_h, p.pad_w = s.pad_w;
  p.dilation_h = s.dilation_h, p.dilation_w = s.dilation_w, p.groups = s.groups, p.deform_groups = s.deform_groups;
  const int64_t k = s.kernel;
  const int64_t out_h = (s.height + 2 * s.pad_h - s.dilation_h * (k - 1) - 1) / s.stride_h + 1;
  const int64_t out_w = (s.width + 2 * s.pad_w - s.dilation_w * (k - 1) - 1) / s.stride_w + 1;
  const int64_t taps = s.deform_groups * k * k * out_h * out_w;
  const auto input = Uniform(s.batch * s.channels * s.height * s.width, -1, 1, 7);
  const auto offset = Uniform(s.batch * 2 * taps, -3, 3, 8);
  const auto mask = Uniform(s.batch * taps, 0, 1, 9);
  const auto weight = Uniform(s.out_channels * s.channels / s.groups * k * k, -0.05f, 0.05f, 10);
  const auto bias = Uniform(s.out_channels, -1, 1, 11);
  std::vector<float> out(s.batch * s.out_channels * out_h * out_w);
  DeformConvArgs a{input.data(), offset.data(), state.range(0) ? mask.data() : nullptr, weight.data(),
                        bias.data(), out.data(), s.batch, s.channels, s.height, s.width, s.out_channels, k, k,
                        out_h, out_w};
  HeapScratchAllocator heap;
  for (auto _ : state) {
    cpu::DeformConv(p, a, heap, SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
  const double flop = 2.0 * s.batch * s.out_channels * (s.channels / s.groups) * k * k * out_h * out_w;
  state.counters["GFLOP/s"] = benchmark::Counter(flop / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(cpu::PackedGemmForThisCpu().name);
}

// dcn.large: [1,256,100,152], 256 -> 256 channels, 3x3, pad 1.
void BM_DeformConvLarge(benchmark::State& state) {
  RunDeformConv(state, {1, 256, 100, 152, 256, 3, 1, 1, 1, 1, 1, 1, 1, 1});
}
BENCHMARK(BM_DeformConvLarge)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// dcn.groups: [2,64,64,64], 64 -> 64, 3x3, stride (2,1), pad (1,2), dilation (1,2), groups 2, deform_groups 4.
void BM_DeformConvGroups(benchmark::State& state) {
  RunDeformConv(state, {2, 64, 64, 64, 64, 3, 2, 1, 1, 2, 1, 2, 2, 4});
}
BENCHMARK(BM_DeformConvGroups)->Arg(1)->Unit(benchmark::kMillisecond);

// dcn.small: [1,3,32,32], 3 -> 8, 3x3 (K = 27).
void BM_DeformConvSmall(benchmark::State& state) {
  RunDeformConv(state, {1, 3, 32, 32, 8, 3, 1, 1, 0, 0, 1, 1, 1, 1});
}
BENCHMARK(BM_DeformConvSmall)->Arg(1)->Unit(benchmark::kMicrosecond);

// The GEMM of dcn.large alone (256 x 2304 weights, 15200 pixels), two ways:
// - PackedGemm, the product the kernel uses (weights packed once, columns pixel-major, tiles of
//   108 pixels as the kernel runs it), once per variant this CPU can run;
// - Eigen's general matrix product over the whole shape, the best GEMM library for this machine
//   in the comparison of DEVELOPERS.md.
void BM_PackedGemmDcnLarge(benchmark::State& state) {
  const int64_t m = 256, k = 2304, n = 15200, tile = 108;
  const cpu::PackedGemm* variants[3];
  const int count = cpu::PackedGemmVariants(variants, 3);
  if (state.range(0) >= count) {
    state.SkipWithError("this CPU cannot run the variant");
    return;
  }
  const cpu::PackedGemm& gemm = *variants[state.range(0)];
  const auto weights = Uniform(m * k, -1, 1, 12);
  const auto columns = Uniform(n * k, -1, 1, 13);
  std::vector<float> packed(gemm.packed_size(m, k)), scratch(gemm.scratch_size(m, tile)), out(m * n);
  for (auto _ : state) {
    gemm.pack_weights(m, k, weights.data(), k, packed.data());
    for (int64_t p0 = 0; p0 < n; p0 += tile) {
      gemm.multiply(m, std::min(tile, n - p0), k, packed.data(), columns.data() + p0 * k, k, nullptr,
                    out.data() + p0, n, scratch.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * k * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(gemm.name);
}
BENCHMARK(BM_PackedGemmDcnLarge)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

void BM_EigenSgemmDcnLarge(benchmark::State& state) {
  const int64_t m = 256, k = 2304, n = 15200;
  const auto a = Uniform(m * k, -1, 1, 12);
  const auto b = Uniform(k * n, -1, 1, 13);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    bench::Sgemm(m, n, k, a.data(), k, b.data(), n, false, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * k * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(bench::SgemmLibrary());
}
BENCHMARK(BM_EigenSgemmDcnLarge)->Unit(benchmark::kMillisecond);

// inverse: [4096, 4, 4] (the lane path) and [64, 64, 64] (one matrix at a time); uniform entries
// in [-1, 1] plus M on the diagonal (well conditioned), rows in their order.
void BM_Inverse(benchmark::State& state) {
  const int64_t batch = state.range(0), m = state.range(1);
  auto a = Uniform(batch * m * m, -1, 1, 14);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i) a[(b * m + i) * m + i] += static_cast<float>(m);
  std::vector<float> out(a.size());
  std::vector<int32_t> info(batch);
  HeapScratchAllocator scratch;
  for (auto _ : state) {
    cpu::Inverse(a.data(), batch, m, out.data(), info.data(), scratch, SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Inverse)->Args({4096, 4})->Args({64, 64})->Unit(benchmark::kMicrosecond);

// msda.encoder (Arg 0: a query per value row, 19947) and msda.decoder (Arg 900): value
// [1, 19947, 8, 32] over levels 100x150, 50x75, 25x38, 13x19, 4 points, locations uniform in
// [-0.05, 1.05], weights uniform (their sum does not matter to the speed).
void BM_MultiScaleDeformableAttention(benchmark::State& state) {
  const std::vector<int64_t> shapes{100, 150, 50, 75, 25, 38, 13, 19}, starts{0, 15000, 18750, 19700};
  const int64_t values = 19947, heads = 8, channels = 32, levels = 4, points = 4;
  const int64_t queries = state.range(0) == 0 ? values : state.range(0);
  const MsdaDims dims{1, values, heads, channels, queries, levels, points};
  const auto value = Uniform(values * heads * channels, -1, 1, 15);
  const auto locations = Uniform(queries * heads * levels * points * 2, -0.05f, 1.05f, 16);
  const auto weights = Uniform(queries * heads * levels * points, 0, 1, 17);
  std::vector<float> out(queries * heads * channels);
  for (auto _ : state) {
    cpu::MultiScaleDeformableAttention(dims, value.data(), shapes.data(), starts.data(), locations.data(),
                                       weights.data(), out.data(), SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_MultiScaleDeformableAttention)->Arg(0)->Arg(900)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace opbridge
