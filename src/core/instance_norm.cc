#include "core/instance_norm.h"

namespace opbridge {

Status CheckInstanceNormParams(const InstanceNormParams& p) { return CheckNormEpsilon(p.epsilon); }

Status CheckInstanceNormShapes(const Shape& input, const Shape& scale, const Shape& bias) {
  // ONNX InstanceNormalization and the TensorRT plugins take [N, C, D1, ...]: at least one
  // spatial dim (the plugins read d[2], and d[3] when present).
  if (input.size() < 3) {
    return Status::Error("input must have rank >= 3 [N, C, D1, ...], got shape ", ShapeToString(input));
  }
  OPBRIDGE_RETURN_IF_ERROR(CheckPerChannelShape("scale", scale, input[1]));
  return CheckPerChannelShape("B", bias, input[1]);
}

}  // namespace opbridge
