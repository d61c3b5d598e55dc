#include "core/grid_sample.h"

#include <climits>

namespace opbridge {

Status MakeGridSampleParams(int64_t interpolation_mode, int64_t padding_mode,
                            int64_t align_corners, GridSampleParams* params) {
  if (interpolation_mode < 0 || interpolation_mode > 2) {
    return Status::Error("interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got ",
                         interpolation_mode);
  }
  if (padding_mode < 0 || padding_mode > 2) {
    return Status::Error("padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ",
                         padding_mode);
  }
  if (align_corners != 0 && align_corners != 1) {
    return Status::Error("align_corners must be 0 or 1, got ", align_corners);
  }
  params->interpolation = static_cast<GridInterpolation>(interpolation_mode);
  params->padding = static_cast<GridPadding>(padding_mode);
  params->align_corners = align_corners == 1;
  return Status::Ok();
}

Status CheckGridSampleShapes(const Shape& input, const Shape& grid) {
  if (input.size() != 4) {
    return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(input));
  }
  if (grid.size() != 4 || grid[3] != 2) {
    return Status::Error("grid must have shape [N, H_out, W_out, 2], got shape ",
                         ShapeToString(grid));
  }
  if (grid[0] != input[0]) {
    return Status::Error("grid batch size ", grid[0], " must equal input batch size ", input[0],
                         " (input ", ShapeToString(input), ", grid ", ShapeToString(grid), ")");
  }
  if (input[2] == 0 || input[3] == 0) {
    // PyTorch rejects this too: there is nothing to sample from.
    return Status::Error("input must have non-empty spatial dimensions, got shape ",
                         ShapeToString(input));
  }
  return Status::Ok();
}

Shape GridSampleOutputShape(const Shape& input, const Shape& grid) {
  return {input[0], input[1], grid[1], grid[2]};
}

Status CheckGridSampleInputPlane(int64_t in_h, int64_t in_w) {
  if (in_h * in_w > INT32_MAX) {
    return Status::Error("input planes of more than 2^31 - 1 elements are not supported, got ", in_h, "x", in_w);
  }
  return Status::Ok();
}

}  // namespace opbridge
