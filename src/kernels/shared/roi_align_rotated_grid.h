// RoIAlignRotated's sampling grid as host-and-device functions (mmcv's roi_align_rotated, operation
// for operation in float32): a RoI's geometry, and the taps of each sample point. The CPU kernel
// (kernels/cpu/roi_align_rotated.cc) and the CUDA kernel (kernels/cuda/roi_align_rotated.cu) both
// sample with these and sum a bin's points in (iy, ix) order, so their outputs are the same bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"
#include "core/roi_align.h"
#include "core/roi_align_rotated.h"
#include "kernels/shared/mmcv_bilinear.h"

namespace opbridge::shared {

// The sampling grid of one RoI, in feature-map coordinates.
struct RotatedGeometry {
  float center_h, center_w, start_h, start_w, bin_h, bin_w, cos_theta, sin_theta;
  int64_t grid_h, grid_w;  // >= 0
  float count;             // max(grid_h * grid_w, 1), the divisor of every bin
  bool finite;
};

// The geometry of the RoI row (batch_index, cx, cy, w, h, theta).
OPBRIDGE_HD inline RotatedGeometry MakeRotatedGeometry(const RoiAlignRotatedParams& p, const float* roi) {
  const float offset = p.aligned ? 0.5f : 0.0f;
  RotatedGeometry g;
  g.center_w = roi[1] * p.spatial_scale - offset;
  g.center_h = roi[2] * p.spatial_scale - offset;
  float roi_w = roi[3] * p.spatial_scale;
  float roi_h = roi[4] * p.spatial_scale;
  const float theta = p.clockwise ? -roi[5] : roi[5];
  // In double, rounded once: the C library's float cosf / sinf are not correctly rounded and
  // glibc picks an FMA build of them on CPUs that have FMA, which would make results depend on
  // the CPU (mmcv calls cosf / sinf; the difference is at most one float ulp of cos and sin). The
  // double functions rounded to float give the correctly rounded value on the CPU and the GPU alike
  // (unless the true value lies within two double ulps of a float rounding boundary).
  g.cos_theta = static_cast<float>(cos(static_cast<double>(theta)));
  g.sin_theta = static_cast<float>(sin(static_cast<double>(theta)));
  if (!p.aligned) {  // legacy behaviour: force malformed RoIs to be 1x1
    roi_w = Max(roi_w, 1.0f);
    roi_h = Max(roi_h, 1.0f);
  }
  g.finite = IsFinite(g.center_w) && IsFinite(g.center_h) && IsFinite(roi_w) && IsFinite(roi_h) && IsFinite(theta);
  g.bin_h = roi_h / static_cast<float>(p.output_height);
  g.bin_w = roi_w / static_cast<float>(p.output_width);
  g.start_h = -roi_h / 2.0f;
  g.start_w = -roi_w / 2.0f;
  int64_t grid_h = 0, grid_w = 0;
  if (!g.finite) {
    grid_h = grid_w = 0;
  } else if (p.sampling_ratio > 0) {
    grid_h = grid_w = p.sampling_ratio;
  } else {
    // ceil(side / out) like mmcv; a negative aligned side gives a grid <= 0, which takes no
    // samples. Clamped to [0, limit] before the integer conversion, which is undefined outside
    // int64's range: huge boxes are rejected by the sample limits.
    const float limit = static_cast<float>(kRoiAlignMaxAxisSamples) + 1.0f;
    grid_h = static_cast<int64_t>(Clamp(ceilf(roi_h / p.output_height), 0.0f, limit));
    grid_w = static_cast<int64_t>(Clamp(ceilf(roi_w / p.output_width), 0.0f, limit));
  }
  g.grid_h = grid_h;
  g.grid_w = grid_w;
  g.count = static_cast<float>(Max<int64_t>(grid_h * grid_w, 1));
  return g;
}

// The point of sample (iy, ix) of bin (ph, pw), and its taps.
OPBRIDGE_HD inline BilinearTaps MakeRotatedTaps(const RotatedGeometry& g, int64_t ph, int64_t pw, int64_t iy,
                                                int64_t ix, int64_t height, int64_t width) {
  const float yy = g.start_h + static_cast<float>(ph) * g.bin_h +
                   (static_cast<float>(iy) + 0.5f) * g.bin_h / static_cast<float>(g.grid_h);
  const float xx = g.start_w + static_cast<float>(pw) * g.bin_w +
                   (static_cast<float>(ix) + 0.5f) * g.bin_w / static_cast<float>(g.grid_w);
  const float y = yy * g.cos_theta - xx * g.sin_theta + g.center_h;
  const float x = yy * g.sin_theta + xx * g.cos_theta + g.center_w;
  return MakeBilinearTaps(y, x, height, width);
}

}  // namespace opbridge::shared
