// Group normalization: parameters, validation and shapes, shared by every backend. Instance
// normalization (core/instance_norm.h) is its case G = C and shares the kernel.
//
// Numerics follow torch.nn.functional.group_norm: per sample n and group g, the mean and the
// biased variance of the group's C / G channels over every spatial position, then
// y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c]. See docs/ops/group_norm.md.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct GroupNormParams {
  int64_t num_groups = 1;  // G: the channels split into G groups of C / G consecutive channels
  float epsilon = 1e-5f;   // added to the variance
};

// The layout every normalization kernel takes: input [N, C, *] as N x C planes of `spatial`
// values (the product of the dims after C; 1 for a rank-2 input).
struct NormLayout {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;
};

// epsilon must be finite and >= 0 (a negative one can make var + epsilon negative: NaN).
Status CheckNormEpsilon(float epsilon);
// Attribute rules, checked once when the session is created: num_groups >= 1, epsilon.
Status CheckGroupNormParams(const GroupNormParams& params);
// The tutorial's num_groups input: a float32 tensor of shape [1] or [].
Status CheckNumGroupsTensorShape(const Shape& shape);
// Its value must be a positive integer (the tutorial truncates it; opbridge refuses fractions).
Status NumGroupsFromValue(float value, int64_t* num_groups);
// A per-channel input (scale, bias, B): shape [C].
Status CheckPerChannelShape(const char* name, const Shape& shape, int64_t channels);
// Shape rules: input [N, C, *] of rank >= 2 with C divisible by num_groups; scale and bias [C]
// when present (nullptr: absent).
Status CheckGroupNormShapes(const Shape& input, int64_t num_groups, const Shape* scale, const Shape* bias);
// N, C and the spatial size of an input whose shape has been checked and has no dim of 0 (the
// product of dims after a 0 may overflow: callers return the empty output first).
NormLayout NormLayoutOf(const Shape& input);

}  // namespace opbridge
