#include "core/bicubic_interpolate.h"

#include <cmath>

namespace opbridge {

Status MakeBicubicInterpolateParams(const std::vector<float>& scale_factor, int64_t align_corners,
                                    BicubicInterpolateParams* params) {
  if (scale_factor.size() != 2) {
    return Status::Error("scale_factor must hold 2 values (height, width), got ", scale_factor.size());
  }
  for (float s : scale_factor) {
    if (!(std::isfinite(s) && s > 0.f)) {
      return Status::Error("scale_factor values must be finite and > 0, got (", scale_factor[0], ", ",
                           scale_factor[1], ")");
    }
  }
  params->scale_h = scale_factor[0];
  params->scale_w = scale_factor[1];
  params->align_corners = align_corners == 1;
  return Status::Ok();
}

Status BicubicInterpolateOutputShape(const Shape& input, const BicubicInterpolateParams& params, Shape* output) {
  if (input.size() != 4) {
    return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(input));
  }
  if (input[2] < 1 || input[3] < 1) {
    return Status::Error("input must have H >= 1 and W >= 1 (as F.interpolate requires), got shape ",
                         ShapeToString(input));
  }
  // F.interpolate's output size: floor(in * scale) in double.
  const double out_h = std::floor(static_cast<double>(input[2]) * params.scale_h);
  const double out_w = std::floor(static_cast<double>(input[3]) * params.scale_w);
  if (out_h < 1 || out_w < 1) {
    return Status::Error("the output size floor(", input[2], " * ", params.scale_h, ") x floor(", input[3], " * ",
                         params.scale_w, ") = ", out_h, " x ", out_w, " is empty (F.interpolate refuses it too)");
  }
  if (out_h > 9.0e15 || out_w > 9.0e15) {
    return Status::Error("the output size ", out_h, " x ", out_w, " is too large");
  }
  const Shape out = {input[0], input[1], static_cast<int64_t>(out_h), static_cast<int64_t>(out_w)};
  int64_t count = 0;
  if (!CheckedNumElements(out, &count)) {
    return Status::Error("the output ", ShapeToString(out), " has more than 2^63 - 1 elements");
  }
  *output = out;
  return Status::Ok();
}

}  // namespace opbridge
