// RoIAlign's sampling rules as host-and-device functions: the sampling grid of a RoI and the
// neighbours of a sample coordinate along one axis (torchvision's roi_align_forward_kernel_impl,
// Caffe2's RoIAlign), and one output bin computed in the CPU kernel's order. The CPU kernel
// (kernels/cpu/roi_align.cc) prepares axis taps with these once per RoI and sums separably; the
// CUDA kernel (kernels/cuda/roi_align.cu) computes each bin with RoiAlignBin, in the same order.
//
// Index is the integer type of the in-map arithmetic: int64_t on the CPU, int32_t in the CUDA
// kernels where the map's plane fits (GPU 64-bit integer math takes several instructions per
// operation and twice the registers).
#pragma once

#include <stdint.h>

#include "core/roi_align.h"
#include "core/host_device.h"
#include "core/half_storage.h"

namespace opbridge::shared {

// One sample coordinate along an axis: its two neighbours and their weights, or outside.
template <class Index>
struct AxisTapOf {
  Index low, high;
  float w_low, w_high;  // torchvision's hy and ly (or hx and lx)
  bool inside;
};
using AxisTap = AxisTapOf<int64_t>;

template <class Index>
OPBRIDGE_HD inline AxisTapOf<Index> MakeAxisTap(float v, Index size) {
  // An empty axis has no pixel to read: every sample is outside and reads 0 (torchvision and
  // mmcv read index -1 there).
  if (size == 0 || v < -1.0f || v > static_cast<float>(size)) return {0, 0, 0.f, 0.f, false};
  if (v <= 0) v = 0;
  Index low = static_cast<Index>(v), high;
  if (low >= size - 1) {
    high = low = size - 1;
    v = static_cast<float>(low);
  } else {
    high = low + 1;
  }
  const float l = v - static_cast<float>(low);
  return {low, high, 1.0f - l, l, true};
}

// Sampling grid of one RoI, in feature-map coordinates. The RoIs and the maps are read in their
// storage type R or T (float, Float16 or BFloat16: half_storage.h), each element as the float it is.
struct RoiGeometry {
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
  bool finite;
};

template <class R>
OPBRIDGE_HD inline RoiGeometry MakeRoiGeometry(const RoiAlignParams& p, const R* roi) {
  const float offset = p.aligned ? 0.5f : 0.0f;
  RoiGeometry g;
  g.start_w = Load(roi + 1) * p.spatial_scale - offset;
  g.start_h = Load(roi + 2) * p.spatial_scale - offset;
  const float end_w = Load(roi + 3) * p.spatial_scale - offset;
  const float end_h = Load(roi + 4) * p.spatial_scale - offset;
  float roi_w = end_w - g.start_w;
  float roi_h = end_h - g.start_h;
  if (!p.aligned) {  // legacy behaviour: force malformed RoIs to be 1x1
    roi_w = Max(roi_w, 1.0f);
    roi_h = Max(roi_h, 1.0f);
  }
  g.finite = IsFinite(g.start_w) && IsFinite(g.start_h) && IsFinite(roi_w) && IsFinite(roi_h);
  g.bin_h = roi_h / static_cast<float>(p.output_height);
  g.bin_w = roi_w / static_cast<float>(p.output_width);
  if (!g.finite) {
    g.grid_h = g.grid_w = 0;
  } else if (p.sampling_ratio > 0) {
    g.grid_h = g.grid_w = p.sampling_ratio;
  } else {
    // ceil(roi / out) like torchvision; an empty or inverted aligned RoI gives a grid <= 0,
    // which takes no samples (as 0 does: the count only divides zeros then). Clamped to
    // [0, limit] before the integer conversion, which is undefined outside int64's range:
    // huge boxes are rejected by the sample limits.
    const float limit = static_cast<float>(kRoiAlignMaxAxisSamples) + 1.0f;
    g.grid_h = static_cast<int64_t>(Clamp(ceilf(roi_h / p.output_height), 0.0f, limit));
    g.grid_w = static_cast<int64_t>(Clamp(ceilf(roi_w / p.output_width), 0.0f, limit));
  }
  return g;
}

// The sample coordinate i of bin b along an axis: start + b * bin + (i + 0.5) * bin / grid.
template <class Index>
OPBRIDGE_HD inline float SampleCoordinate(float start, float bin, Index b, Index i, Index grid) {
  return start + b * bin + (static_cast<float>(i) + 0.5f) * bin / static_cast<float>(grid);
}

// The tap of sample i of bin b along an axis of `size` pixels (grid samples a bin).
template <class Index>
OPBRIDGE_HD inline AxisTapOf<Index> SampleTap(float start, float bin, Index b, Index i, Index grid, Index size) {
  return MakeAxisTap<Index>(SampleCoordinate<Index>(start, bin, b, i, grid), size);
}

// The sample at the taps (y, x) of a plane: torchvision's w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
// with w1..w4 = hy*hx, hy*lx, ly*hx, ly*lx; 0 outside the map.
template <class Index, class T>
OPBRIDGE_HD inline float InterpolateSample(const AxisTapOf<Index>& y, const AxisTapOf<Index>& x, const T* plane,
                                           Index width) {
  if (!y.inside || !x.inside) return 0.0f;
  const T* low = plane + y.low * width;
  const T* high = plane + y.high * width;
  return (y.w_low * x.w_low) * Load(low + x.low) + (y.w_low * x.w_high) * Load(low + x.high) +
         (y.w_high * x.w_low) * Load(high + x.low) + (y.w_high * x.w_high) * Load(high + x.high);
}

// A bin of one channel plane from its taps: y_tap(iy) for its sample rows iy < grid_h, x_tap(ix) for
// its sample columns ix < grid_w, as the CPU kernel computes it. "avg": per sample row inside the
// map, the sums over the bin's sample columns of its two neighbour rows, sum(w_low * row[x.low] +
// w_high * row[x.high]) (x-interpolation), combined as y.w_low * low_sum + y.w_high * high_sum and
// added to the bin's sum (y-interpolation), which is divided by `count` (max(grid_h * grid_w, 1)):
// torchvision's samples and weights, summed separably (the bits of the CPU kernel, which shares each
// row's sums among its bins, and no float32 sum of more than grid_w terms before the rows combine: a
// bin of 2^30 samples of 3.0 averages to 3.0). "max" keeps the largest sample, w1 * v1 + w2 * v2 +
// w3 * v3 + w4 * v4 with w1..w4 = hy*hx, hy*lx, ly*hx, ly*lx (mmcv's rule without its -10000 floor):
// NaN propagates, no samples give 0. A sample outside the map reads 0.
template <class Index, class YTaps, class XTaps, class T>
OPBRIDGE_HD inline float PoolBin(RoiPoolMode mode, Index grid_h, Index grid_w, float count, const T* plane,
                                 Index width, const YTaps& y_tap, const XTaps& x_tap) {
  if (mode == RoiPoolMode::kAvg) {
    float sum = 0.0f;
    for (Index iy = 0; iy < grid_h; ++iy) {
      const AxisTapOf<Index> y = y_tap(iy);
      if (!y.inside) continue;
      const T* low = plane + y.low * width;
      const T* high = plane + y.high * width;
      float low_sum = 0.0f, high_sum = 0.0f;
      for (Index ix = 0; ix < grid_w; ++ix) {
        const AxisTapOf<Index> x = x_tap(ix);
        if (!x.inside) continue;
        low_sum += x.w_low * Load(low + x.low) + x.w_high * Load(low + x.high);
        high_sum += x.w_low * Load(high + x.low) + x.w_high * Load(high + x.high);
      }
      sum += y.w_low * low_sum + y.w_high * high_sum;
    }
    return sum / count;
  }
  if (grid_h == 0 || grid_w == 0) return 0.0f;
  float best = -INFINITY;
  for (Index iy = 0; iy < grid_h; ++iy) {
    const AxisTapOf<Index> y = y_tap(iy);
    for (Index ix = 0; ix < grid_w; ++ix) {
      const float v = InterpolateSample<Index>(y, x_tap(ix), plane, width);  // 0 outside the map
      if (IsNan(v)) return v;
      if (v > best) best = v;
    }
  }
  return best;
}

// The sample count a bin's sum is divided by: torchvision's max(grid_h * grid_w, 1) of the signed grid.
OPBRIDGE_HD inline float BinSampleCount(const RoiGeometry& g) {
  return static_cast<float>(Max<int64_t>(g.grid_h * g.grid_w, 1));
}

// The grid of a RoI along each axis, at least 0, in the kernel's index type.
template <class Index>
OPBRIDGE_HD inline Index GridRows(const RoiGeometry& g) { return static_cast<Index>(Max<int64_t>(g.grid_h, 0)); }
template <class Index>
OPBRIDGE_HD inline Index GridColumns(const RoiGeometry& g) { return static_cast<Index>(Max<int64_t>(g.grid_w, 0)); }

// Output bin (ph, pw) of one RoI from one channel plane (PoolBin), its taps computed as it goes. g
// must be finite (a non-finite RoI's bins are NaN).
template <class Index, class T>
OPBRIDGE_HD inline float RoiAlignBin(const RoiAlignParams& p, const RoiGeometry& g, const T* plane, Index height,
                                     Index width, Index ph, Index pw) {
  const Index grid_h = GridRows<Index>(g), grid_w = GridColumns<Index>(g);
  return PoolBin<Index>(p.mode, grid_h, grid_w, BinSampleCount(g), plane, width,
                        [&](Index iy) { return SampleTap<Index>(g.start_h, g.bin_h, ph, iy, grid_h, height); },
                        [&](Index ix) { return SampleTap<Index>(g.start_w, g.bin_w, pw, ix, grid_w, width); });
}

// What the CUDA kernels need of one RoI for every output element of it, computed once per RoI (by a
// pre-pass for the multi-level ops, by each thread block for RoIAlign) (RoIAlign has channels x bins elements per RoI; recomputing the grid, the sample budget's
// 64-bit divisions and, for the multi-level ops, a float64 level per element cost more than the
// element's own reads).
struct RoiPlan {
  enum Kind : int32_t {
    kPool,   // pool from image `image` of map `map` with `geometry`
    kNan,    // a row of NaN: where the CPU op reports an error the device cannot (a batch index outside
             // (-1, N) or NaN, a sampling grid beyond the limits), and a non-finite box (NaN on the CPU too)
    kZero,   // a row of zeros (a multi-level RoI without a level)
    kSkip,   // not this launch's: its level is among another launch's maps
  } kind;
  int32_t map;    // kPool: the map index within the launch (0 for single-level RoIAlign)
  int64_t image;  // kPool: the batch index, truncated
  RoiGeometry geometry;
};

// The plan of one RoI (batch_index, x1, y1, x2, y2) for RoIAlign over input [batch, ...].
template <class R>
OPBRIDGE_HD inline RoiPlan MakeRoiPlan(const RoiAlignParams& p, const R* roi, int64_t batch) {
  RoiPlan plan{};
  plan.geometry = MakeRoiGeometry(p, roi);
  const RoiGeometry& g = plan.geometry;
  const float batch_index = Load(roi);
  const bool pools = IsRoiBatchIndex(batch_index, batch) && g.finite &&
                     WithinSampleBudget(g.grid_h, g.grid_w, p.output_height, p.output_width);
  plan.kind = pools ? RoiPlan::kPool : RoiPlan::kNan;
  plan.image = pools ? static_cast<int64_t>(batch_index) : 0;
  return plan;
}

// Output element `index` of [num_rois, channels, out_h, out_w] as (RoI, channel, bin), in the index
// type of the kernel (int32_t where the element count allows: GPU division is cheap only there).
template <class Index>
struct RoiElement {
  Index roi, channel, bin;
};
template <class Index>
OPBRIDGE_HD inline RoiElement<Index> RoiElementOf(Index bins, Index channels, Index index) {
  const Index row = index / bins;
  return {row / channels, row % channels, index - row * bins};
}

// Channel c's plane of a pooling RoI's image in data [batch, channels, height, width] (the offset in
// 64 bits).
template <class Index, class T>
OPBRIDGE_HD inline const T* RoiPlane(const RoiPlan& plan, const T* data, int64_t channels, Index height,
                                         Index width, int64_t c) {
  return data + (plan.image * channels + c) * static_cast<int64_t>(height) * width;
}

// The value of bin `bin` (ph * out_w + pw) of channel c of a RoI with plan `plan`, pooled from the
// map data [batch, channels, height, width]: NaN for kNan, 0 for kZero, else RoiAlignBin. Index
// must hold height * width (the plane's offset is computed in 64 bits).
template <class Index, class T>
OPBRIDGE_HD inline float RoiPlanValue(const RoiAlignParams& p, const RoiPlan& plan, const T* data, int64_t channels,
                                      Index height, Index width, int64_t c, Index bin) {
  if (plan.kind == RoiPlan::kNan) return NAN;
  if (plan.kind != RoiPlan::kPool) return 0.0f;
  const Index out_w = static_cast<Index>(p.output_width);
  return RoiAlignBin<Index>(p, plan.geometry, RoiPlane<Index>(plan, data, channels, height, width, c), height, width,
                            bin / out_w, bin % out_w);
}

// ---- RoIAlign's CUDA kernel: a thread block per (RoI, channel tile) ---------------------------------
// The block plans its RoI, computes the RoI's sample-row taps (out_h * grid_h of them: tap
// ph * grid_h + iy) and sample-column taps (out_w * grid_w) once into shared memory, then its threads
// pool the tile's elements from them (PoolBin): no division per sample, the same bits. A RoI whose
// taps do not fit (a grid of more than kRoiMaxAxisTaps / out samples per axis) is pooled computing
// its taps per sample (RoiPlanValue).
constexpr int64_t kRoiMaxAxisTaps = 256;

OPBRIDGE_HD inline bool RoiTapsFit(const RoiAlignParams& p, const RoiPlan& plan) {
  return plan.kind == RoiPlan::kPool && Max<int64_t>(plan.geometry.grid_h, 0) * p.output_height <= kRoiMaxAxisTaps &&
         Max<int64_t>(plan.geometry.grid_w, 0) * p.output_width <= kRoiMaxAxisTaps;
}

// Sample-row tap t (bin t / grid_h, sample t % grid_h) and sample-column tap t of a RoI.
template <class Index>
OPBRIDGE_HD inline AxisTapOf<Index> RoiRowTap(const RoiGeometry& g, Index height, Index t) {
  const Index grid_h = GridRows<Index>(g);
  return SampleTap<Index>(g.start_h, g.bin_h, t / grid_h, t % grid_h, grid_h, height);
}
template <class Index>
OPBRIDGE_HD inline AxisTapOf<Index> RoiColumnTap(const RoiGeometry& g, Index width, Index t) {
  const Index grid_w = GridColumns<Index>(g);
  return SampleTap<Index>(g.start_w, g.bin_w, t / grid_w, t % grid_w, grid_w, width);
}

// Bin `bin` of channel c of a RoI whose taps fit (RoiTapsFit), from its row and column taps.
template <class Index, class T>
OPBRIDGE_HD inline float RoiTappedValue(const RoiAlignParams& p, const RoiPlan& plan, const AxisTapOf<Index>* rows,
                                        const AxisTapOf<Index>* columns, const T* data, int64_t channels,
                                        Index height, Index width, int64_t c, Index bin) {
  const RoiGeometry& g = plan.geometry;
  const Index grid_h = GridRows<Index>(g), grid_w = GridColumns<Index>(g);
  const Index out_w = static_cast<Index>(p.output_width);
  const AxisTapOf<Index>* bin_rows = rows + (bin / out_w) * grid_h;
  const AxisTapOf<Index>* bin_columns = columns + (bin % out_w) * grid_w;
  const T* plane = RoiPlane<Index>(plan, data, channels, height, width, c);
  return PoolBin<Index>(p.mode, grid_h, grid_w, BinSampleCount(g), plane, width,
                        [&](Index iy) { return bin_rows[iy]; }, [&](Index ix) { return bin_columns[ix]; });
}

// Element e of the tile of channels [first_channel, first_channel + tile) of a RoI: channel
// first_channel + e / bins, bin e % bins; from the taps where they fit, else computing them.
template <class Index, class T>
OPBRIDGE_HD inline float RoiTileValue(const RoiAlignParams& p, const RoiPlan& plan, bool tapped,
                                      const AxisTapOf<Index>* rows, const AxisTapOf<Index>* columns, const T* data,
                                      int64_t channels, Index height, Index width, int64_t first_channel, Index e) {
  const Index bins = static_cast<Index>(p.output_height * p.output_width);
  const int64_t c = first_channel + e / bins;
  const Index bin = e % bins;
  return tapped ? RoiTappedValue<Index>(p, plan, rows, columns, data, channels, height, width, c, bin)
                : RoiPlanValue<Index>(p, plan, data, channels, height, width, c, bin);
}

}  // namespace opbridge::shared
