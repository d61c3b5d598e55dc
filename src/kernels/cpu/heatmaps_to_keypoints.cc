// Keypoint R-CNN heatmap decoding CPU kernel. The semantics and limits are described in
// heatmaps_to_keypoints.h; the interpolation arithmetic in interpolate.h.
//
// PyTorch's bicubic kernel computes each output sample on its own: for each of its four source
// rows, the four-tap sum along that row at the sample's column (the "row pass"), then the
// four-tap sum of those four values down the column. A row pass depends only on the source row
// and the output column, not on the output row, so we compute it once per (source row, output
// column) and reuse it for every output row that reads that source row: the same values, about
// a quarter of the multiply-adds when upsampling.
//
// Work layout: one task per (roi, keypoint) pair. A task walks its resized map in bands of at
// most kBandColumns columns; per band it computes the column taps, then goes down the output
// rows, keeping the row passes of the last four source rows it read (an output row reads four
// consecutive source rows, clamped, and they only move down as the output row does), and
// updates the running argmax with each finished band row. Memory per task is a few tens of KB
// whatever the roi size. Every output element is written by exactly one task.
#include "kernels/cpu/heatmaps_to_keypoints.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/interpolate.h"
#include "kernels/shared/heatmap_keypoint.h"

namespace opbridge::cpu {
namespace {

// Columns per band: the band's taps (4 int64 indices and 4 weights per column), four cached row
// passes and one output row take 68 KB, which stays in the core's L2 cache.
constexpr int64_t kBandColumns = 1024;

using shared::MakeRoiHeatmap;
using shared::RoiHeatmap;

// The running torch.argmax (shared::HeatmapArgmax), fed a band row at a time.
struct Argmax : shared::HeatmapArgmax {
  Argmax() : shared::HeatmapArgmax(None()) {}
  // values[x] is the sample of flat index first + x.
  void Scan(const float* values, int64_t count, int64_t first) {
    for (int64_t x = 0; x < count; ++x) Consider(values[x], first + x);
  }
};

// The column taps of one band, as arrays.
struct BandTaps {
  int64_t* index[4];
  float* weight[4];
};

// The loops below are also compiled for x86-64-v3 (RunAtCpuLevel, chosen at run
// time), where std::fma is one instruction instead of a libm call and ColumnPass and
// AnyNotBelow handle 8 samples per instruction; the results are identical on every CPU.

// Whether any of values[0, count) could change the argmax: not below `value` (equal, greater or
// NaN). Once the running maximum is found most band rows have none, and this test is a vector
// compare per 8 samples where Argmax::Scan is a branch per sample.
struct AnyNotBelowBody {
  static constexpr const char* kName = "HeatmapsToKeypoints: AnyNotBelow";
  OPBRIDGE_ALWAYS_INLINE static bool Run(const float* __restrict values, int64_t count, float value);
};

OPBRIDGE_ALWAYS_INLINE bool AnyNotBelowBody::Run(const float* __restrict values, int64_t count, float value) {
  int32_t n = 0;  // a count rather than a bool: GCC vectorises this reduction
  ForEachInBlocksOf8(count, [&](int64_t x) { n += values[x] < value ? 0 : 1; });
  return n > 0;
}

// The column taps of band columns [x0, x0 + count) of an out_w-wide resize of a map_w-wide map.
struct MakeBandTapsBody {
  static constexpr const char* kName = "HeatmapsToKeypoints: MakeBandTaps";
  OPBRIDGE_ALWAYS_INLINE static void Run(float scale, int64_t x0, int64_t count, int64_t map_w, const BandTaps& taps);
};

OPBRIDGE_ALWAYS_INLINE void MakeBandTapsBody::Run(float scale, int64_t x0, int64_t count, int64_t map_w,
                                                  const BandTaps& taps) {
  for (int64_t x = 0; x < count; ++x) {
    const CubicTap t = CubicSourceTap(scale, x0 + x, map_w);
    for (int j = 0; j < 4; ++j) {
      taps.index[j][x] = t.index[j];
      taps.weight[j][x] = t.weight[j];
    }
  }
}

// The taps of output row y (a function of its own for the x86-64-v3 build).
struct RowTapBody {
  static constexpr const char* kName = "HeatmapsToKeypoints: RowTap";
  OPBRIDGE_ALWAYS_INLINE static CubicTap Run(float scale, int64_t y, int64_t map_h);
};

OPBRIDGE_ALWAYS_INLINE CubicTap RowTapBody::Run(float scale, int64_t y, int64_t map_h) {
  return CubicSourceTap(scale, y, map_h);
}

// Row pass of one source row over a band: out[x] = the four-tap sum along the row at column x.
struct RowPassBody {
  static constexpr const char* kName = "HeatmapsToKeypoints: RowPass";
  OPBRIDGE_ALWAYS_INLINE static void Run(const float* __restrict row, const BandTaps& taps, int64_t count,
                                         float* __restrict out);
};

OPBRIDGE_ALWAYS_INLINE void RowPassBody::Run(const float* __restrict row, const BandTaps& taps, int64_t count,
                                             float* __restrict out) {
  const int64_t *i0 = taps.index[0], *i1 = taps.index[1], *i2 = taps.index[2], *i3 = taps.index[3];
  const float *w0 = taps.weight[0], *w1 = taps.weight[1], *w2 = taps.weight[2], *w3 = taps.weight[3];
  for (int64_t x = 0; x < count; ++x) {
    out[x] = CubicCombine(row[i0[x]], row[i1[x]], row[i2[x]], row[i3[x]], w0[x], w1[x], w2[x], w3[x]);
  }
}

// Column pass: out[x] = the four-tap sum of the row passes t0..t3 with one output row's weights.
struct ColumnPassBody {
  static constexpr const char* kName = "HeatmapsToKeypoints: ColumnPass";
  OPBRIDGE_ALWAYS_INLINE static void Run(const float* __restrict t0, const float* __restrict t1,
                                         const float* __restrict t2, const float* __restrict t3, const float* w,
                                         int64_t count, float* __restrict out);
};

OPBRIDGE_ALWAYS_INLINE void ColumnPassBody::Run(const float* __restrict t0, const float* __restrict t1,
                                                const float* __restrict t2, const float* __restrict t3, const float* w,
                                                int64_t count, float* __restrict out) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  ForEachInBlocksOf8(count, [&](int64_t x) { out[x] = CubicCombine(t0[x], t1[x], t2[x], t3[x], w0, w1, w2, w3); });
}

// Argmax of one keypoint's map resized to out_h x out_w; arena holds TaskScratchBytes(out_w).
Argmax ResizedArgmax(const float* map, int64_t map_h, int64_t map_w, int64_t out_h, int64_t out_w, Arena arena) {
  const int64_t band = std::min(out_w, kBandColumns);
  BandTaps taps;
  for (int j = 0; j < 4; ++j) taps.index[j] = arena.Take<int64_t>(band);
  for (int j = 0; j < 4; ++j) taps.weight[j] = arena.Take<float>(band);
  float* cached[4];  // row passes, slot = source row % 4
  for (int j = 0; j < 4; ++j) cached[j] = arena.Take<float>(band);
  float* values = arena.Take<float>(band);

  const float scale_w = InterpolateScale(map_w, out_w);
  const float scale_h = InterpolateScale(map_h, out_h);
  Argmax best;
  for (int64_t x0 = 0; x0 < out_w; x0 += band) {
    const int64_t count = std::min(band, out_w - x0);
    RunAtCpuLevel<3, MakeBandTapsBody>(scale_w, x0, count, map_w, taps);
    // An output row reads source rows floor(real) - 1 .. floor(real) + 2 (clamped): at most four
    // consecutive rows, so they fall in distinct slots of row % 4.
    int64_t cached_row[4] = {-1, -1, -1, -1};
    for (int64_t y = 0; y < out_h; ++y) {
      const CubicTap t = RunAtCpuLevel<3, RowTapBody>(scale_h, y, map_h);
      const float* passes[4];
      for (int j = 0; j < 4; ++j) {
        const int64_t source_row = t.index[j];
        const int slot = static_cast<int>(source_row & 3);
        if (cached_row[slot] != source_row) {
          RunAtCpuLevel<3, RowPassBody>(map + source_row * map_w, taps, count, cached[slot]);
          cached_row[slot] = source_row;
        }
        passes[j] = cached[slot];
      }
      RunAtCpuLevel<3, ColumnPassBody>(passes[0], passes[1], passes[2], passes[3], t.weight, count, values);
      if (RunAtCpuLevel<3, AnyNotBelowBody>(values, count, best.value)) best.Scan(values, count, y * out_w + x0);
    }
  }
  return best;
}

size_t TaskScratchBytes(int64_t out_w) {
  const int64_t band = std::min(out_w, kBandColumns);
  return 4 * ArenaBytes<int64_t>(band) + 9 * ArenaBytes<float>(band);
}

}  // namespace

Status HeatmapsToKeypoints(const float* maps, int64_t r, int64_t k, int64_t map_h, int64_t map_w, const float* rois,
                           float* xy, float* scores, ScratchAllocator& scratch, const TaskRunner& runner) {
  if (r < 0 || k < 0) return Status::Error("negative size: r=", r, ", k=", k);
  if (r == 0 || k == 0) return Status::Ok();
  if (map_h < 1 || map_w < 1) return Status::Error("heatmaps must be at least 1x1, got ", map_h, "x", map_w);
  // Reject oversized rois before starting any work.
  for (int64_t i = 0; i < r; ++i) {
    const RoiHeatmap m = MakeRoiHeatmap(rois + 4 * i);
    if (m.finite && !m.within_limit) {
      return Status::Error("roi ", i, " needs a ", std::ceil(m.height), "x", std::ceil(m.width),
                           " resized heatmap (the ceiling of its clamped height and width), more than ",
                           kKeypointsMaxMapSamples, " samples");
    }
  }

  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(r * k), [&](size_t task) {
    const int64_t i = static_cast<int64_t>(task) / k;
    const float* roi = rois + 4 * i;
    float* out_xy = xy + 3 * static_cast<int64_t>(task);
    float* out_score = scores + static_cast<int64_t>(task);
    const RoiHeatmap m = MakeRoiHeatmap(roi);
    if (!m.finite) {  // no map size: the keypoint is undefined, say so with NaN
      shared::WriteKeypoint(roi, m, Argmax(), out_xy, out_score);
      return;
    }
    const size_t bytes = TaskScratchBytes(m.out_w);
    ScratchBlock block(scratch, bytes);
    if (block.data() == nullptr) {
      out_of_memory = true;
      out_xy[0] = out_xy[1] = *out_score = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    const float* map = maps + static_cast<int64_t>(task) * map_h * map_w;
    const Argmax best = ResizedArgmax(map, map_h, map_w, m.out_h, m.out_w, Arena(block.data(), bytes));
    shared::WriteKeypoint(roi, m, best, out_xy, out_score);
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for the resized heatmaps");
  return Status::Ok();
}

}  // namespace opbridge::cpu
