// Single-thread microbenchmarks of the CPU kernels at the workloads.md shapes, without ORT.
// For the comparison against ORT's built-ins and PyTorch, use `./run.sh bench`.
//   ./build/opbridge_kernel_bench --benchmark_filter=GridSample
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/deform_conv.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/grid_sample.h"
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

// dcn.large: [1,256,100,152], 256 -> 256 channels, 3x3, pad 1, offsets N(0, 2), mask in (0, 1).
void BM_DeformConvLarge(benchmark::State& state) {
  const int64_t c = 256, h = 100, w = 152, k = 3;
  DeformConvParams p;
  p.pad_h = p.pad_w = 1;
  const auto input = Uniform(c * h * w, -1, 1, 7);
  const auto offset = Uniform(2 * k * k * h * w, -3, 3, 8);
  const auto mask = Uniform(k * k * h * w, 0, 1, 9);
  const auto weight = Uniform(c * c * k * k, -0.05f, 0.05f, 10);
  const auto bias = Uniform(c, -1, 1, 11);
  std::vector<float> out(c * h * w);
  cpu::DeformConvArgs a{input.data(), offset.data(), state.range(0) ? mask.data() : nullptr, weight.data(),
                        bias.data(), out.data(), 1, c, h, w, c, k, k, h, w};
  HeapScratchAllocator heap;
  for (auto _ : state) {
    cpu::DeformConv(p, a, heap, SerialTaskRunner());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * c * c * k * k * h * w / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(cpu::SgemmLibrary());
}
BENCHMARK(BM_DeformConvLarge)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// The GEMM of dcn.large alone: [256 x 2304] x [2304 x 15200].
void BM_SgemmDcnLarge(benchmark::State& state) {
  const int64_t m = 256, k = 2304, n = 15200;
  const auto a = Uniform(m * k, -1, 1, 12);
  const auto b = Uniform(k * n, -1, 1, 13);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    cpu::Sgemm(m, n, k, a.data(), k, b.data(), n, false, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * k * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(cpu::SgemmLibrary());
}
BENCHMARK(BM_SgemmDcnLarge)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace opbridge
