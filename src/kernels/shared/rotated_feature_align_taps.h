// Rotated feature align's sample points as host-and-device code (mmcv's
// rotated_feature_align_forward, float32): the taps of one pixel's box. The CPU kernel
// (kernels/cpu/rotated_feature_align.cc) and the CUDA kernel (kernels/cuda/rotated_feature_align.cu)
// both sample with these and add a pixel's value and its samples in order: the same bits.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"
#include "core/rotated_feature_align.h"
#include "kernels/shared/mmcv_bilinear.h"

namespace opbridge::shared {

// The taps of the sample points of one pixel's box (y, x, w, h, a), in mmcv's order and float32
// arithmetic: p.points of them (1 or 5). R: the box's storage type, read as the floats it holds.
template <class R>
OPBRIDGE_HD inline void PixelTaps(const RotatedFeatureAlignParams& p, const R* stored_box, int64_t height,
                                  int64_t width, BilinearTaps* taps) {
  // Each value read where it is used (a local array of the five was spilled on the GPU).
  const float roi_y = Load(stored_box) * p.spatial_scale;
  const float roi_x = Load(stored_box + 1) * p.spatial_scale;
  taps[0] = MakeBilinearTaps(roi_y, roi_x, height, width);
  if (p.points == 1) return;
  const float roi_w = Load(stored_box + 2) * p.spatial_scale;
  const float roi_h = Load(stored_box + 3) * p.spatial_scale;
  const float roi_a = Load(stored_box + 4);
  const float w_2 = roi_w / 2, h_2 = roi_h / 2;
  // mmcv calls cosf and sinf. glibc's are within an ulp of the true value but not correctly
  // rounded (about 1% of angles differ from it in the last bit), and x86-64 glibc picks an FMA
  // build of them on CPUs that have FMA. The float64 functions rounded to float32 give the
  // correctly rounded value (unless the true value lies within an ulp of float64 from a float32
  // rounding boundary), so results do not depend on the CPU or the C library; the GPU's double
  // functions rounded to float give the same (unless within two double ulps of such a boundary).
  const float cosa = static_cast<float>(cos(static_cast<double>(roi_a)));
  const float sina = static_cast<float>(sin(static_cast<double>(roi_a)));
  const float wx = cosa * w_2, wy = sina * w_2;
  const float hx = -sina * h_2, hy = cosa * h_2;
  taps[1] = MakeBilinearTaps(roi_y + wy + hy, roi_x + wx + hx, height, width);
  taps[2] = MakeBilinearTaps(roi_y - wy + hy, roi_x - wx + hx, height, width);
  taps[3] = MakeBilinearTaps(roi_y - wy - hy, roi_x - wx - hx, height, width);
  taps[4] = MakeBilinearTaps(roi_y + wy - hy, roi_x + wx - hx, height, width);
}

}  // namespace opbridge::shared
