// Deformable convolution's bilinear samples as host-and-device functions: where a kernel tap's
// sampling point falls (its top-left corner and torchvision's four weights) and the sample's value
// from its four corners. The CPU kernel (kernels/cpu/deform_conv.cc) runs them in its vectorised tap
// and channel loops, the CUDA kernel (kernels/cuda/deform_conv.cu) per sampled column element.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// The point (y, x) of an H x W map: torchvision's rules without branches. The sample is 0 when y <= -1,
// y >= H, x <= -1 or x >= W (`inside` false: every corner reads 0, and the weights are 0), and NaN
// when y or x is NaN (w[0] NaN; torchvision's integer cast of NaN is undefined). Inside, the
// corners are (y_low, x_low), (y_low, x_low + 1), (y_low + 1, x_low) and (y_low + 1, x_low + 1),
// y_low in [-1, H - 1] and x_low in [-1, W - 1]: those off the map read 0.
struct DeformTap {
  int32_t y_low, x_low;
  float w[4];  // top-left, top-right, bottom-left, bottom-right
  bool inside;
};

OPBRIDGE_HD inline DeformTap MakeDeformTap(float y, float x, float height, float width) {
  const bool inside = (y > -1.0f) & (y < height) & (x > -1.0f) & (x < width);  // false for NaN
  const bool is_nan = (y != y) | (x != x);
  const float ys = inside ? y : 0.0f, xs = inside ? x : 0.0f;
  const float y_low = floorf(ys), x_low = floorf(xs);
  const float lh = ys - y_low, lw = xs - x_low;
  const float hh = 1.0f - lh, hw = 1.0f - lw;
  DeformTap t;
  t.y_low = static_cast<int32_t>(y_low);
  t.x_low = static_cast<int32_t>(x_low);
  t.inside = inside;
  t.w[0] = inside ? hh * hw : (is_nan ? NAN : 0.0f);
  t.w[1] = inside ? hh * lw : 0.0f;
  t.w[2] = inside ? lh * hw : 0.0f;
  t.w[3] = inside ? lh * lw : 0.0f;
  return t;
}

// The sample from its corners' values v0..v3 (0 for a corner off the map), in torchvision's order;
// DCNv2 multiplies it by the mask after.
OPBRIDGE_HD inline float DeformTapValue(float w0, float w1, float w2, float w3, float v0, float v1, float v2,
                                        float v3) {
  return w0 * v0 + w1 * v1 + w2 * v2 + w3 * v3;
}

}  // namespace opbridge::shared
