#include "core/grid_sample.h"

#include <climits>

namespace opbridge {

Status MakeGridSampleParams(int64_t interpolation_mode, int64_t padding_mode,
                            int64_t align_corners, GridSampleParams* params) {
  params->interpolation = static_cast<GridInterpolation>(interpolation_mode);
  params->padding = static_cast<GridPadding>(padding_mode);
  params->align_corners = align_corners == 1;
  return Status::Ok();
}

Status CheckGridSampleShapes(const GridSampleParams& params, const Shape& input, const Shape& grid) {
  if (input.size() != 4 && input.size() != 5) {
    return Status::Error("input must have rank 4 [N, C, H, W] or 5 [N, C, D, H, W], got shape ", ShapeToString(input));
  }
  if (input.size() == 4 && (grid.size() != 4 || grid[3] != 2)) {
    return Status::Error("grid must have shape [N, H_out, W_out, 2] for a 4-D input, got shape ",
                         ShapeToString(grid));
  }
  if (input.size() == 5 && (grid.size() != 5 || grid[4] != 3)) {
    return Status::Error("grid must have shape [N, D_out, H_out, W_out, 3] for a 5-D input, got shape ",
                         ShapeToString(grid));
  }
  if (input.size() == 5 && params.interpolation == GridInterpolation::kBicubic) {
    return Status::Error("bicubic interpolation (interpolation_mode 2) needs a 4-D input, as in PyTorch; got a 5-D "
                         "input of shape ", ShapeToString(input));
  }
  if (grid[0] != input[0]) {
    return Status::Error("grid batch size ", grid[0], " must equal input batch size ", input[0],
                         " (input ", ShapeToString(input), ", grid ", ShapeToString(grid), ")");
  }
  if (input[2] == 0 || input[3] == 0 || (input.size() == 5 && input[4] == 0)) {
    // PyTorch rejects this too: there is nothing to sample from.
    return Status::Error("input must have non-empty spatial dimensions, got shape ",
                         ShapeToString(input));
  }
  return Status::Ok();
}

Shape GridSampleOutputShape(const Shape& input, const Shape& grid) {
  if (input.size() == 5) return {input[0], input[1], grid[1], grid[2], grid[3]};
  return {input[0], input[1], grid[1], grid[2]};
}

Status CheckGridSampleInputPlane(int64_t in_h, int64_t in_w) {
  if (in_h * in_w > INT32_MAX) {
    return Status::Error("input planes of more than 2^31 - 1 elements are not supported, got ", in_h, "x", in_w);
  }
  return Status::Ok();
}

Status CheckGridSampleInputVolume(int64_t in_d, int64_t in_h, int64_t in_w) {
  // Each factor is nonzero (the shape rules); compared in steps, without overflow (a tensor with
  // no channels may have sides whose product exceeds int64).
  if (in_w > INT32_MAX || in_h > INT32_MAX / in_w || in_d > INT32_MAX / (in_h * in_w)) {
    return Status::Error("input volumes of more than 2^31 - 1 elements are not supported, got ", in_d, "x", in_h, "x",
                         in_w);
  }
  return Status::Ok();
}

}  // namespace opbridge
