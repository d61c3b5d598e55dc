#include "core/group_norm.h"

#include <cmath>

namespace opbridge {

Status CheckNormEpsilon(float epsilon) {
  if (!std::isfinite(epsilon) || epsilon < 0.0f) {
    return Status::Error("epsilon must be a finite number >= 0, got ", epsilon);
  }
  return Status::Ok();
}

Status CheckGroupNormParams(const GroupNormParams& p) {
  if (p.num_groups < 1) return Status::Error("num_groups must be >= 1, got ", p.num_groups);
  return CheckNormEpsilon(p.epsilon);
}

Status CheckNumGroupsTensorShape(const Shape& shape) {
  if (!(shape.empty() || (shape.size() == 1 && shape[0] == 1))) {
    return Status::Error("num_groups must be a float32 tensor of shape [1] (or a scalar), got shape ",
                         ShapeToString(shape));
  }
  return Status::Ok();
}

Status NumGroupsFromValue(float value, int64_t* num_groups) {
  // 2^62 bounds the conversion (undefined beyond int64's range); no tensor has that many channels.
  if (!(value >= 1.0f && value <= 4.6e18f) || std::floor(value) != value) {
    return Status::Error("num_groups must hold a positive integer value, got ", value);
  }
  *num_groups = static_cast<int64_t>(value);
  return Status::Ok();
}

Status CheckPerChannelShape(const char* name, const Shape& shape, int64_t channels) {
  if (shape.size() != 1 || shape[0] != channels) {
    return Status::Error(name, " must have shape [C] = [", channels, "] (one value per channel), got shape ",
                         ShapeToString(shape));
  }
  return Status::Ok();
}

Status CheckGroupNormShapes(const Shape& input, int64_t num_groups, const Shape* scale, const Shape* bias) {
  if (input.size() < 2) {
    return Status::Error("input must have rank >= 2 [N, C, ...], got shape ", ShapeToString(input));
  }
  const int64_t channels = input[1];
  if (channels % num_groups != 0) {
    return Status::Error("the channel count C = ", channels, " of input ", ShapeToString(input),
                         " must be divisible by num_groups = ", num_groups);
  }
  if (scale != nullptr) OPBRIDGE_RETURN_IF_ERROR(CheckPerChannelShape("scale", *scale, channels));
  if (bias != nullptr) OPBRIDGE_RETURN_IF_ERROR(CheckPerChannelShape("bias", *bias, channels));
  return Status::Ok();
}

NormLayout NormLayoutOf(const Shape& input) {
  NormLayout layout;
  layout.batch = input[0];
  layout.channels = input[1];
  layout.spatial = 1;
  for (size_t i = 2; i < input.size(); ++i) layout.spatial *= input[i];
  return layout;
}

}  // namespace opbridge
