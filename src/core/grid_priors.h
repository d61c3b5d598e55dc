// Grid priors (mmdet's AnchorGenerator.single_level_grid_priors; mmdeploy's GridPriorsTRT): shape
// rules shared by every backend. See docs/ops/grid_priors.md.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct GridPriorsParams {
  int64_t stride_h = 1;  // feature-map rows to image pixels
  int64_t stride_w = 1;  // feature-map columns to image pixels
};

// Attribute rule: both strides in [-2^24, 2^24], where every stride and every shift below 2^24
// is exact in float32 (mmdet's strides are 4 to 128).
Status MakeGridPriorsParams(int64_t stride_h, int64_t stride_w, GridPriorsParams* params);

// Shape rules: base_anchors [A, 4]; the providers of the grid's height and width are rank 1
// ([H] and [W]; only their lengths are used); H * W * A * 4 fits int64. The output is [H * W * A, 4].
Status CheckGridPriorsShapes(const Shape& base_anchors, const Shape& h_provider, const Shape& w_provider,
                             Shape* output);

}  // namespace opbridge
