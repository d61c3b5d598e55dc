// Deformable convolution (DCNv1) and modulated deformable convolution (DCNv2): parameters,
// validation and output shape, shared by every backend.
//
// Numerics follow torchvision.ops.deform_conv2d (with and without mask).
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct DeformConvParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  int64_t deform_groups = 1;
};

// Attribute rules. stride and dilation: 2 ints (H, W) or 1 int for both; padding: 2 ints, 1 int,
// or mmdeploy's 4 ints [pad_h, pad_h, pad_w, pad_w].
Status MakeDeformConvParams(const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups,
                            int64_t deform_groups, DeformConvParams* params);

// Shapes of one call. mask and bias may be null (absent).
struct DeformConvShapes {
  Shape input, offset, weight;
  const Shape* mask = nullptr;
  const Shape* bias = nullptr;
};

// One call's tensors (in host memory for the CPU kernel, device memory for the CUDA kernel) and
// sizes, after CheckDeformConvShapes.
struct DeformConvArgs {
  const float* input;   // [N, C, H, W]
  const float* offset;  // [N, 2 * DG * kh * kw, H_out, W_out]: (dy, dx) per kernel tap
  const float* mask;    // [N, DG * kh * kw, H_out, W_out], or nullptr (DCNv1)
  const float* weight;  // [C_out, C / groups, kh, kw]
  const float* bias;    // [C_out], or nullptr
  float* output;        // [N, C_out, H_out, W_out]
  int64_t batch, channels, height, width;
  int64_t out_channels, kernel_h, kernel_w;
  int64_t out_h, out_w;
};

// Shape rules; on success *output is [N, C_out, H_out, W_out].
Status CheckDeformConvShapes(const DeformConvParams& params, const DeformConvShapes& shapes,
                             Shape* output);

}  // namespace opbridge
