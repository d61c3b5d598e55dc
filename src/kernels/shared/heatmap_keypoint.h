// Keypoint R-CNN heatmap decoding per sample and per keypoint, host-and-device: a roi's resized
// map size, one sample of the bicubic resize, torch.argmax's rules as a running maximum, and the
// keypoint torchvision derives from it. The CPU kernel (kernels/cpu/heatmaps_to_keypoints.cc,
// which caches row passes) and the CUDA kernel (a thread block per keypoint) both use these; see
// kernels/cpu/heatmaps_to_keypoints.h for the semantics.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"
#include "kernels/shared/interpolate.h"

namespace opbridge::shared {

// The most samples (H * W) a roi's resized map may have: 2^26 (e.g. 8192 x 8192).
constexpr int64_t kKeypointsMaxMapSamples = int64_t{1} << 26;

// A roi's resized map, as heatmaps_to_keypoints sizes it.
struct RoiHeatmap {
  float width, height;   // clamped to at least 1; NaN stays NaN (torch.clamp)
  bool finite;           // width and height are finite; otherwise the outputs are NaN
  int64_t out_w, out_h;  // ceil(width), ceil(height); set when finite and within the limit
  bool within_limit;
};

OPBRIDGE_HD inline RoiHeatmap MakeRoiHeatmap(const float* roi) {
  RoiHeatmap m{};
  m.width = roi[2] - roi[0];
  m.height = roi[3] - roi[1];
  m.width = m.width < 1.0f ? 1.0f : m.width;
  m.height = m.height < 1.0f ? 1.0f : m.height;
  m.finite = IsFinite(m.width) && IsFinite(m.height);
  if (!m.finite) return m;
  const float w = ceilf(m.width), h = ceilf(m.height);
  // In double: the product of two finite floats cannot overflow there.
  m.within_limit = static_cast<double>(w) * static_cast<double>(h) <= static_cast<double>(kKeypointsMaxMapSamples);
  if (m.within_limit) {
    m.out_w = static_cast<int64_t>(w);
    m.out_h = static_cast<int64_t>(h);
  }
  return m;
}

// The resized map's sample at source taps ty (its row) and tx (its column): the four-tap sum along
// each of its four source rows (the row passes), then down the column, in PyTorch's order. Tap:
// CubicTap, or CachedCubicTap.
template <class Tap>
OPBRIDGE_HD inline float ResizedHeatmapSampleAt(const float* map, int64_t map_w, const Tap& ty, const Tap& tx) {
  float pass[4];
  for (int j = 0; j < 4; ++j) {
    const float* row = map + static_cast<int64_t>(ty.index[j]) * map_w;
    pass[j] = CubicCombine(row[tx.index[0]], row[tx.index[1]], row[tx.index[2]], row[tx.index[3]], tx.weight[0],
                           tx.weight[1], tx.weight[2], tx.weight[3]);
  }
  return CubicCombine(pass[0], pass[1], pass[2], pass[3], ty.weight[0], ty.weight[1], ty.weight[2], ty.weight[3]);
}

// Sample (y, x) of the map resized by bicubic F.interpolate.
OPBRIDGE_HD inline float ResizedHeatmapSample(const float* map, int64_t map_h, int64_t map_w, float scale_h,
                                              float scale_w, int64_t y, int64_t x) {
  return ResizedHeatmapSampleAt(map, map_w, CubicSourceTap(scale_h, y, map_h), CubicSourceTap(scale_w, x, map_w));
}

// A source tap as the CUDA kernel keeps it in shared memory for every row and column of a roi's
// resized map (each sample then reads two instead of computing them): 32-bit indices, for maps whose
// sides are below 2^31 (CanCacheTaps).
struct CachedCubicTap {
  int32_t index[4];
  float weight[4];
};
OPBRIDGE_HD inline CachedCubicTap CacheTap(const CubicTap& t) {
  CachedCubicTap c;
  for (int j = 0; j < 4; ++j) {
    c.index[j] = static_cast<int32_t>(t.index[j]);
    c.weight[j] = t.weight[j];
  }
  return c;
}
constexpr int64_t kCachedTapsPerAxis = 512;  // 2 x 512 x 32 bytes of shared memory
OPBRIDGE_HD inline bool CanCacheTaps(const RoiHeatmap& m, int64_t map_h, int64_t map_w) {
  return m.out_h <= kCachedTapsPerAxis && m.out_w <= kCachedTapsPerAxis && map_h <= INT32_MAX && map_w <= INT32_MAX;
}

// The running torch.argmax of the samples seen so far, in any order: the largest value, ties to
// the lowest flat index; a NaN beats every number, and ties with other NaNs by index too. Those
// are the rules of ATen's argmax reduction (greater_or_nan), which make its answer the first
// maximum in row-major order, or the first NaN. They order (value, index) pairs totally, so
// partial results merge in any order (Consider(other.value, other.index)).
struct HeatmapArgmax {
  float value;
  int64_t index;
  bool nan;

  OPBRIDGE_HD static HeatmapArgmax None() { return {-INFINITY, INT64_MAX, false}; }
  OPBRIDGE_HD void Consider(float v, int64_t i) {
    if (v < value) return;  // the usual case; false when either is NaN
    if (v == value) {
      if (i < index) Take(v, i);  // an earlier equal one (-0 and +0 too)
    } else if (nan) {
      if (IsNan(v) && i < index) Take(v, i);
    } else {  // v > value, or v is the first NaN
      nan = IsNan(v);
      Take(v, i);
    }
  }
  OPBRIDGE_HD void Take(float v, int64_t i) {
    value = v;
    index = i;
  }
};

// The keypoint (x, y, 1) and score of a roi whose resized map's argmax is `best`; NaN when the roi
// has no map size (m not finite) or, on the GPU, a map beyond the limit (the CPU op reports that).
// torchvision's formulas, in float32: the corrections are float divisions, x_int.float() + 0.5,
// then the multiply, then the roi offset.
OPBRIDGE_HD inline void WriteKeypoint(const float* roi, const RoiHeatmap& m, const HeatmapArgmax& best, float* xy,
                                      float* score) {
  xy[2] = 1.0f;
  if (!m.finite || !m.within_limit) {
    xy[0] = xy[1] = *score = NAN;
    return;
  }
  const float width_correction = m.width / static_cast<float>(m.out_w);
  const float height_correction = m.height / static_cast<float>(m.out_h);
  const int64_t x_int = best.index % m.out_w;
  const int64_t y_int = best.index / m.out_w;
  const float x = (static_cast<float>(x_int) + 0.5f) * width_correction;
  const float y = (static_cast<float>(y_int) + 0.5f) * height_correction;
  xy[0] = x + roi[0];
  xy[1] = y + roi[1];
  *score = best.value;
}

}  // namespace opbridge::shared
