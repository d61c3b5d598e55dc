// Deformable convolution CPU kernel (DCNv1 without mask, DCNv2 with mask), float32, NCHW.
// Framework-free: raw pointers, shapes, params.
#pragma once

#include <cstdint>

#include "core/deform_conv.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

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

// Shapes must have passed CheckDeformConvShapes. Scratch is taken from `scratch`: per call, one
// input image transposed with a zero border ((H + 3) x (W + 2) x C floats) and the weights
// reordered and packed (about 2 x C_out x K floats); per task, a tile of sampled columns
// (about 1 MB) and its product.
Status DeformConv(const DeformConvParams& params, const DeformConvArgs& args,
                  ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
