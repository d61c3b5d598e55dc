// Deformable convolution CPU kernel (DCNv1 without mask, DCNv2 with mask), float32, NCHW.
// Framework-free: raw pointers, shapes, params.
#pragma once

#include <cstdint>

#include "core/deform_conv.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// Shapes must have passed CheckDeformConvShapes. Scratch is taken from `scratch`: per call, one
// input image transposed with a zero border ((H + 3) x (W + 2) x C floats) and the weights
// reordered and packed (about 2 x C_out x K floats); per task, a tile of sampled columns
// (about 1 MB) and its product.
Status DeformConv(const DeformConvParams& params, const DeformConvArgs& args,
                  ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
