// Grid sampler: parameters, validation and output shape, shared by every backend.
//
// Numerics follow torch.nn.functional.grid_sample on 4-D input (ATen's grid_sampler_2d) and on 5-D
// input (grid_sampler_3d: "bilinear" is trilinear; no bicubic), using PyTorch's integer codes for
// the modes, as mmcv and mmdeploy export them.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

enum class GridInterpolation { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class GridPadding { kZeros = 0, kBorder = 1, kReflection = 2 };

struct GridSampleParams {
  GridInterpolation interpolation = GridInterpolation::kBilinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

// The params from the integer codes (the values the manifest allows were checked by the glue's
// generated reader: each is one of the enums' values).
Status MakeGridSampleParams(int64_t interpolation_mode, int64_t padding_mode,
                            int64_t align_corners, GridSampleParams* params);
// Shape rules: input [N, C, H, W] with H, W > 0 and grid [N, Ho, Wo, 2], or input [N, C, D, H, W]
// with D, H, W > 0 and grid [N, Do, Ho, Wo, 3] (not bicubic, as in PyTorch), the same N.
Status CheckGridSampleShapes(const GridSampleParams& params, const Shape& input, const Shape& grid);
// [N, C, Ho, Wo] or [N, C, Do, Ho, Wo]
Shape GridSampleOutputShape(const Shape& input, const Shape& grid);
// The kernels address a plane (or volume) with 32-bit offsets: at most 2^31 - 1 elements in it.
Status CheckGridSampleInputPlane(int64_t in_h, int64_t in_w);
Status CheckGridSampleInputVolume(int64_t in_d, int64_t in_h, int64_t in_w);

}  // namespace opbridge
