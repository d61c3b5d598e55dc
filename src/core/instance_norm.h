// Instance normalization: parameters and validation, shared by every backend. It is group
// normalization with one group per channel (core/group_norm.h), and runs the same kernel.
//
// Numerics: per sample n and channel c, the mean and the biased variance over every spatial
// position, then y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c] (ONNX
// InstanceNormalization, torch.nn.functional.instance_norm, and what the TensorRT plugins
// MMCVInstanceNormalization and TRTInstanceNormalization compute). See docs/ops/instance_norm.md.
#pragma once

#include "core/group_norm.h"

namespace opbridge {

struct InstanceNormParams {
  float epsilon = 1e-5f;  // added to the variance
};

// Attribute rules, checked once when the session is created.
Status CheckInstanceNormParams(const InstanceNormParams& params);
// Shape rules: input [N, C, D1, ...] of rank >= 3 (every rank: statistics over all dims after C);
// scale and B [C].
Status CheckInstanceNormShapes(const Shape& input, const Shape& scale, const Shape& bias);

}  // namespace opbridge
