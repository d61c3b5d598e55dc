// Which code the CPU runs: every function built per x86-64 level (RunAtCpuLevel, and the kernels
// that choose their variant by hand) runs at the best level this CPU has, up to the level it is
// built for. The test runs each kernel once on a small problem that reaches every such function,
// then reads the levels the functions noted (cpu_level.h: DispatchedLevels) and prints them: under
// ./run.sh test's emulated CPUs (OPBRIDGE_EXPECT_CPU_LEVEL) and under Wine they show what a Haswell,
// a Nehalem or Windows ran.
#include "kernels/cpu/cpu_level.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/scratch.h"
#include "kernels/cpu/deform_conv.h"
#include "kernels/cpu/extreme_scan.h"
#include "kernels/cpu/grid_sample.h"
#include "kernels/cpu/group_norm.h"
#include "kernels/cpu/heatmaps_to_keypoints.h"
#include "kernels/cpu/inverse.h"
#include "kernels/cpu/multi_scale_deformable_attention.h"
#include "kernels/cpu/packed_gemm.h"
#include "kernels/cpu/paste_masks.h"
#include "kernels/cpu/scaled_dot_product_attention.h"

namespace opbridge {
namespace {

// Every dispatching function, with the highest level it is built for.
const std::map<std::string, int> kDispatchingFunctions = {
    {"GroupNorm: ChunkMoments", 4},
    {"GroupNorm: NormalizeValues", 4},
    {"GroupNorm: LoadChunk", 4},
    {"CumMax/CumMin: LanesStep", 3},
    {"CumMax/CumMin: LanesStepValues", 3},
    {"CumMax/CumMin: EightRows", 3},
    {"MultiScaleDeformableAttention: RunQueries", 4},
    {"GridSample: MakeBorderedTaps", 4},
    {"GridSample: SampleBordered", 3},
    {"PasteMasks: PasteRowGeneric", 3},
    {"PasteMasks: PasteRowChannelsLast", 3},
    {"HeatmapsToKeypoints: AnyNotBelow", 3},
    {"HeatmapsToKeypoints: MakeBandTaps", 3},
    {"HeatmapsToKeypoints: RowTap", 3},
    {"HeatmapsToKeypoints: RowPass", 3},
    {"HeatmapsToKeypoints: ColumnPass", 3},
    {"Inverse: InvertSmall", 4},
    {"Inverse: InvertLarge", 4},
    {"DeformConv2d: SampleTile", 4},
    {"PackedGemm", 4},
    {"ScaledDotProductAttention: SoftmaxRows", 4},
};

std::vector<float> Random(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

#define EXPECT_OK(expr)                      \
  do {                                       \
    const Status status_ = (expr);           \
    EXPECT_TRUE(status_.ok()) << status_.message(); \
  } while (0)

// One small call of each kernel, reaching each of its dispatching functions.
void RunEveryDispatchingKernel() {
  const SerialTaskRunner runner;
  HeapScratchAllocator heap;

  // Group norm: planes of 32 values (normalized by NormalizeValues from 16 on), in float32 and in
  // float16 storage (whose chunks LoadChunk converts).
  {
    const NormLayout layout{2, 4, 32};
    const auto x = Random(2 * 4 * 32, 1);
    std::vector<float> y(x.size());
    EXPECT_OK(cpu::GroupNorm<float>(x.data(), layout, 2, nullptr, nullptr, 1e-5f, y.data(), runner));
    std::vector<shared::Float16> x16(x.size()), y16(x.size());
    shared::StoreRun(x.data(), static_cast<int64_t>(x.size()), x16.data());
    EXPECT_OK(cpu::GroupNorm<shared::Float16>(x16.data(), layout, 2, nullptr, nullptr, 1e-5f, y16.data(), runner));
  }
  // Scans: along a middle axis (lanes, with and without indices) and the last (eight rows at a time).
  {
    const auto x = Random(8 * 16 * 4, 2);
    std::vector<float> values(x.size());
    std::vector<int64_t> indices(x.size());
    EXPECT_OK(cpu::ScanAxis(Extreme::kMax, x.data(), ScanLayout{1, 16, 32}, false, values.data(), indices.data(),
                            runner));
    EXPECT_OK(cpu::ScanAxis(Extreme::kMax, x.data(), ScanLayout{1, 16, 32}, false, values.data(), nullptr, runner));
    EXPECT_OK(cpu::ScanAxis(Extreme::kMin, x.data(), ScanLayout{32, 16, 1}, false, values.data(), indices.data(),
                            runner));
  }
  // Multi-scale deformable attention: one level of 4 x 4, 2 queries of 2 points.
  {
    MsdaDims d;
    d.batch = 1, d.values = 16, d.heads = 1, d.channels = 8, d.queries = 2, d.levels = 1, d.points = 2;
    const auto value = Random(16 * 8, 3);
    const int64_t shapes[] = {4, 4}, starts[] = {0};
    const auto locations = Random(2 * 2 * 2, 4, 0.0f, 1.0f);
    const auto weights = Random(2 * 2, 5, 0.0f, 1.0f);
    std::vector<float> out(2 * 8);
    EXPECT_OK(cpu::MultiScaleDeformableAttention(d, value.data(), shapes, starts, locations.data(), weights.data(),
                                                 out.data(), runner));
  }
  // Grid sampling, bilinear with zeros: a 64 x 64 grid on an 8 x 8 plane reads bordered planes.
  {
    const GridSampleParams params;
    const auto input = Random(8 * 8, 6);
    const auto grid = Random(64 * 64 * 2, 7);
    std::vector<float> out(64 * 64);
    std::vector<float> scratch(cpu::GridSampleScratchBytes() / sizeof(float) + 1);
    EXPECT_OK(cpu::GridSample(params, input.data(), 1, 1, 8, 8, grid.data(), 64, 64, out.data(), scratch.data(),
                              runner));
  }
  // Mask pasting: a small box (PyTorch's channels-last kernel, h + w <= 128) and a large one.
  {
    const auto masks = Random(2 * 28 * 28, 8, 0.0f, 1.0f);
    const float boxes[] = {10, 10, 30, 30, 5, 5, 150, 150};
    std::vector<float> out(2 * 160 * 160);
    EXPECT_OK(cpu::PasteMasks(masks.data(), 2, 28, boxes, 160, 160, 1, out.data(), heap, runner));
  }
  // Keypoint decoding: one 8 x 8 map resized to a 20 x 20 RoI.
  {
    const auto maps = Random(8 * 8, 9);
    const float rois[] = {0, 0, 20, 20};
    float xy[3], scores[1];
    EXPECT_OK(cpu::HeatmapsToKeypoints(maps.data(), 1, 1, 8, 8, rois, xy, scores, heap, runner));
  }
  // Inverse: orders 3 (lane-wise, InvertSmall) and 9 (one matrix at a time, InvertLarge).
  for (const int64_t m : {3, 9}) {
    auto a = Random(2 * m * m, 10);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < m; ++i) a[(b * m + i) * m + i] += 4.0f;  // well conditioned
    std::vector<float> inv(a.size());
    std::vector<int32_t> info(2);
    EXPECT_OK(cpu::Inverse(a.data(), 2, m, inv.data(), info.data(), heap, runner));
  }
  // Deformable convolution: 4 channels of 6 x 6, a 3 x 3 kernel (and PackedGemm for its product).
  {
    const DeformConvParams p;
    const auto input = Random(4 * 6 * 6, 11), offset = Random(2 * 9 * 4 * 4, 12), weight = Random(4 * 4 * 9, 13);
    std::vector<float> out(4 * 4 * 4);
    const DeformConvArgs a{input.data(), offset.data(), nullptr, weight.data(), nullptr, out.data(), 1, 4, 6, 6,
                           4,            3,             3,       4,             4};
    EXPECT_OK(cpu::DeformConv(p, a, heap, runner));
  }
  // Attention: 2 queries, 3 keys, 4 embedding and value channels.
  {
    const AttentionSizes s{1, 2, 3, 4, 4};
    const auto q = Random(2 * 4, 14), k = Random(3 * 4, 15), v = Random(3 * 4, 16);
    std::vector<float> out(2 * 4), attn(2 * 3);
    EXPECT_OK(cpu::ScaledDotProductAttention(q.data(), k.data(), v.data(), nullptr, s, out.data(), attn.data(), heap,
                                             runner));
  }
}

std::string LevelName(int level) { return level == 0 ? "aarch64" : "x86-64-v" + std::to_string(level); }

TEST(CpuLevel, EveryDispatchingFunctionRunsAtTheBestLevelOfThisCpu) {
  RunEveryDispatchingKernel();
  const int cpu = cpu::CpuLevel();
  if (const char* expected = std::getenv("OPBRIDGE_EXPECT_CPU_LEVEL")) {
    EXPECT_EQ(LevelName(cpu), expected);
  }
  std::set<std::string> seen;
  std::cout << "this CPU: " << LevelName(cpu) << "; the dispatching functions ran at:\n";
  for (const auto& [name, level] : cpu::DispatchedLevels()) {
    const auto known = kDispatchingFunctions.find(name);
    ASSERT_NE(known, kDispatchingFunctions.end()) << name << " is not in this test's list";
    const int best = cpu == 0 ? 0 : std::min(cpu, known->second);
    EXPECT_EQ(level, best) << name;
    if (seen.insert(name).second) std::cout << "  " << LevelName(level) << "  " << name << "\n";
  }
  for (const auto& [name, top] : kDispatchingFunctions) EXPECT_TRUE(seen.count(name)) << name << " did not run";
}

}  // namespace
}  // namespace opbridge
