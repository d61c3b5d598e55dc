// Bicubic interpolation (F.interpolate(mode="bicubic") by a scale factor; mmdeploy's
// TRTBicubicInterpolate): parameters, validation and output shape, shared by every backend.
// See docs/ops/bicubic_interpolate.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct BicubicInterpolateParams {
  float scale_h = 1.f;  // scale_factor[0]
  float scale_w = 1.f;  // scale_factor[1]
  bool align_corners = true;
};

// Attribute rules: scale_factor holds 2 finite values > 0 (align_corners, 0 or 1: the values the
// manifest allows were checked by the glue's generated reader).
Status MakeBicubicInterpolateParams(const std::vector<float>& scale_factor, int64_t align_corners,
                                    BicubicInterpolateParams* params);

// Shape rules: input [N, C, H, W] with H, W >= 1; the output [N, C, floor(H * scale_h),
// floor(W * scale_w)] (F.interpolate's sizes, in double) must have both sides >= 1.
Status BicubicInterpolateOutputShape(const Shape& input, const BicubicInterpolateParams& params, Shape* output);

}  // namespace opbridge
