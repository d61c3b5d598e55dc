// RoIAlign's sampling rules as host-and-device functions: the sampling grid of a RoI and the
// neighbours of a sample coordinate along one axis (torchvision's roi_align_forward_kernel_impl,
// Caffe2's RoIAlign), and one output bin computed in torchvision's order. The CPU kernel
// (kernels/cpu/roi_align.cc) prepares axis taps with these once per RoI and sums separably; the
// CUDA kernel (kernels/cuda/roi_align.cu) computes each bin with RoiAlignBin.
#pragma once

#include <stdint.h>

#include "core/roi_align.h"
#include "core/host_device.h"

namespace opbridge::shared {

// One sample coordinate along an axis: its two neighbours and their weights, or outside.
struct AxisTap {
  int64_t low, high;
  float w_low, w_high;  // torchvision's hy and ly (or hx and lx)
  bool inside;
};

OPBRIDGE_HD inline AxisTap MakeAxisTap(float v, int64_t size) {
  // An empty axis has no pixel to read: every sample is outside and reads 0 (torchvision and
  // mmcv read index -1 there).
  if (size == 0 || v < -1.0f || v > static_cast<float>(size)) return {0, 0, 0.f, 0.f, false};
  if (v <= 0) v = 0;
  int64_t low = static_cast<int64_t>(v), high;
  if (low >= size - 1) {
    high = low = size - 1;
    v = static_cast<float>(low);
  } else {
    high = low + 1;
  }
  const float l = v - static_cast<float>(low);
  return {low, high, 1.0f - l, l, true};
}

// Sampling grid of one RoI, in feature-map coordinates.
struct RoiGeometry {
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
  bool finite;
};

OPBRIDGE_HD inline RoiGeometry MakeRoiGeometry(const RoiAlignParams& p, const float* roi) {
  const float offset = p.aligned ? 0.5f : 0.0f;
  RoiGeometry g;
  g.start_w = roi[1] * p.spatial_scale - offset;
  g.start_h = roi[2] * p.spatial_scale - offset;
  const float end_w = roi[3] * p.spatial_scale - offset;
  const float end_h = roi[4] * p.spatial_scale - offset;
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
OPBRIDGE_HD inline float SampleCoordinate(float start, float bin, int64_t b, int64_t i, int64_t grid) {
  return start + b * bin + (static_cast<float>(i) + 0.5f) * bin / static_cast<float>(grid);
}

// The sample at the taps (y, x) of a plane: torchvision's w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
// with w1..w4 = hy*hx, hy*lx, ly*hx, ly*lx; 0 outside the map.
OPBRIDGE_HD inline float InterpolateSample(const AxisTap& y, const AxisTap& x, const float* plane, int64_t width) {
  if (!y.inside || !x.inside) return 0.0f;
  const float* low = plane + y.low * width;
  const float* high = plane + y.high * width;
  return (y.w_low * x.w_low) * low[x.low] + (y.w_low * x.w_high) * low[x.high] +
         (y.w_high * x.w_low) * high[x.low] + (y.w_high * x.w_high) * high[x.high];
}

// Output bin (ph, pw) of one RoI from one channel plane, in torchvision's order: per sample row,
// per sample column, w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4 with w1..w4 = hy*hx, hy*lx, ly*hx,
// ly*lx, added to the bin's sum, which "avg" divides by max(grid_h * grid_w, 1). "max" keeps the
// largest sample (mmcv's rule without its -10000 floor): NaN propagates, no samples give 0. A
// sample outside the map reads 0. g must be finite (a non-finite RoI's bins are NaN).
OPBRIDGE_HD inline float RoiAlignBin(const RoiAlignParams& p, const RoiGeometry& g, const float* plane,
                                     int64_t height, int64_t width, int64_t ph, int64_t pw) {
  const int64_t grid_h = Max<int64_t>(g.grid_h, 0), grid_w = Max<int64_t>(g.grid_w, 0);
  if (p.mode == RoiPoolMode::kAvg) {
    float sum = 0.0f;
    for (int64_t iy = 0; iy < grid_h; ++iy) {
      const AxisTap y = MakeAxisTap(SampleCoordinate(g.start_h, g.bin_h, ph, iy, grid_h), height);
      for (int64_t ix = 0; ix < grid_w; ++ix) {
        const AxisTap x = MakeAxisTap(SampleCoordinate(g.start_w, g.bin_w, pw, ix, grid_w), width);
        if (y.inside && x.inside) sum += InterpolateSample(y, x, plane, width);
      }
    }
    return sum / static_cast<float>(Max<int64_t>(g.grid_h * g.grid_w, 1));
  }
  if (grid_h == 0 || grid_w == 0) return 0.0f;
  float best = -INFINITY;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    const AxisTap y = MakeAxisTap(SampleCoordinate(g.start_h, g.bin_h, ph, iy, grid_h), height);
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      const AxisTap x = MakeAxisTap(SampleCoordinate(g.start_w, g.bin_w, pw, ix, grid_w), width);
      const float v = InterpolateSample(y, x, plane, width);  // 0 outside the map
      if (IsNan(v)) return v;
      if (v > best) best = v;
    }
  }
  return best;
}

// What the CUDA kernels need of one RoI for every output element of it, computed once per RoI by a
// pre-pass (RoIAlign has channels x bins elements per RoI; recomputing the grid, the sample budget's
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
OPBRIDGE_HD inline RoiPlan MakeRoiPlan(const RoiAlignParams& p, const float* roi, int64_t batch) {
  RoiPlan plan{};
  plan.geometry = MakeRoiGeometry(p, roi);
  const RoiGeometry& g = plan.geometry;
  const bool pools = IsRoiBatchIndex(roi[0], batch) && g.finite &&
                     WithinSampleBudget(g.grid_h, g.grid_w, p.output_height, p.output_width);
  plan.kind = pools ? RoiPlan::kPool : RoiPlan::kNan;
  plan.image = pools ? static_cast<int64_t>(roi[0]) : 0;
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

// The value of bin `bin` (ph * out_w + pw) of channel c of a RoI with plan `plan`, pooled from the
// map data [batch, channels, height, width]: NaN for kNan, 0 for kZero, else RoiAlignBin.
OPBRIDGE_HD inline float RoiPlanValue(const RoiAlignParams& p, const RoiPlan& plan, const float* data, int64_t channels,
                                      int64_t height, int64_t width, int64_t c, int64_t bin) {
  if (plan.kind == RoiPlan::kNan) return NAN;
  if (plan.kind != RoiPlan::kPool) return 0.0f;
  const float* plane = data + (plan.image * channels + c) * height * width;
  return RoiAlignBin(p, plan.geometry, plane, height, width, bin / p.output_width, bin % p.output_width);
}

// What the RoIAlign CUDA kernel's thread for output element `index` of [num_rois, channels, out_h,
// out_w] writes, the RoIs' plans (MakeRoiPlan) made.
template <class Index>
OPBRIDGE_HD inline void RoiAlignElement(const RoiAlignParams& p, const RoiPlan* plans, const float* input,
                                        int64_t channels, int64_t height, int64_t width, Index index, float* output) {
  const auto e = RoiElementOf<Index>(static_cast<Index>(p.output_height * p.output_width),
                                     static_cast<Index>(channels), index);
  output[index] = RoiPlanValue(p, plans[e.roi], input, channels, height, width, e.channel, e.bin);
}

}  // namespace opbridge::shared
