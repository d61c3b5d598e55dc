// RoIAlign: parameters, validation and output shape, shared by every backend.
//
// Numerics follow torchvision.ops.roi_align (which equals mmcv's MMCVRoiAlign in "avg" mode);
// see docs/ops/roi_align.md for the exact rules and where opbridge differs from the peers.
#pragma once

#include <cstdint>

#include "core/half_storage.h"
#include "core/host_device.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

enum class RoiPoolMode { kAvg = 0, kMax = 1 };

struct RoiAlignParams {
  int64_t output_height = 1;
  int64_t output_width = 1;
  float spatial_scale = 1.0f;
  int64_t sampling_ratio = 0;  // > 0: fixed samples per bin side; <= 0: ceil(roi_side / out_side)
  RoiPoolMode mode = RoiPoolMode::kAvg;
  bool aligned = false;  // true: pixel centres at +0.5 (shift rois by -0.5) and no size clamp
};

// The most sample rows (output_height * grid_h) or columns (output_width * grid_w) one RoI may
// take, and the most samples (rows x columns). More only come from absurd boxes (an adaptive
// grid over a million pixels) or sampling ratios, and would run for hours; they are an error
// instead. The output size is bounded by the same limits (each bin takes at least one sample
// row and column), so a huge output_height or output_width is refused at session creation,
// before any output is allocated.
constexpr int64_t kRoiAlignMaxAxisSamples = int64_t{1} << 20;
constexpr int64_t kRoiAlignMaxRoiSamples = int64_t{1} << 31;

// The per-RoI sample limits above, for RoI `roi` with a grid_h x grid_w sampling grid per bin
// (RoIAlign and RoIAlignRotated).
Status CheckRoiSampleBudget(int64_t roi, int64_t grid_h, int64_t grid_w, int64_t output_height,
                            int64_t output_width);

// Attribute rules, checked once when the session is created.
Status CheckRoiAlignParams(const RoiAlignParams& params);
// Shape rules: input [N, C, H, W], rois [R, 5].
Status CheckRoiAlignShapes(const Shape& input, const Shape& rois);
// Data rules: every batch index rois[r, 0] truncates to an integer in [0, N). Rows hold
// row_size values (5 for boxes, 6 for rotated boxes), stored as R: float, shared::Float16 or
// shared::BFloat16 (core/half_storage.h).
template <class R>
Status CheckRoiAlignRois(const R* rois, int64_t num_rois, int64_t batch, int64_t row_size = 5);
// [R, C, output_height, output_width]
Shape RoiAlignOutputShape(const RoiAlignParams& params, const Shape& input, const Shape& rois);

}  // namespace opbridge

// The RoI rules the CUDA kernels apply too (host-and-device code, core/host_device.h).
namespace opbridge::shared {

// Whether a RoI's grid is within the sample limits of CheckRoiSampleBudget (above).
OPBRIDGE_HD inline bool WithinSampleBudget(int64_t grid_h, int64_t grid_w, int64_t out_h, int64_t out_w) {
  const bool axis_ok = grid_h <= kRoiAlignMaxAxisSamples / out_h && grid_w <= kRoiAlignMaxAxisSamples / out_w;
  return axis_ok && (out_h * grid_h) * (out_w * grid_w) <= kRoiAlignMaxRoiSamples;
}

// Whether a RoI's batch index b, stored as a float and truncated toward zero (torchvision's and
// mmcv's rule), names an image of a batch of `batch`: b in (-1, batch). None does when the batch is
// empty: (-1, 0) truncates to 0, which is not an image then. NaN never does. The CPU ops' check
// (CheckRoiAlignRois) and the CUDA kernels use this one rule.
OPBRIDGE_HD inline bool IsRoiBatchIndex(float b, int64_t batch) {
  return batch > 0 && b > -1.0f && b < static_cast<float>(batch);
}

}  // namespace opbridge::shared
