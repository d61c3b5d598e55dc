// PyTorch's cubic convolution weights (aten's UpSample.h), host-and-device: the bicubic grid
// sampler (grid_sample_taps.h) and bicubic interpolation (bicubic_taps.h) take their four tap
// weights from these two polynomials, each with its own PyTorch function's arguments.
#pragma once

#include "core/host_device.h"

namespace opbridge::shared {

// The weight of a tap at distance x <= 1 (x in [0, 1]) and 1 < x < 2 from the sample, in float.
OPBRIDGE_HD inline float CubicConvolution1(float x, float a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
OPBRIDGE_HD inline float CubicConvolution2(float x, float a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

}  // namespace opbridge::shared
