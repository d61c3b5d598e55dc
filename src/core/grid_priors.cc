#include "core/grid_priors.h"

#include <utility>

namespace opbridge {

namespace {
constexpr int64_t kMaxStride = int64_t{1} << 24;
}  // namespace

Status MakeGridPriorsParams(int64_t stride_h, int64_t stride_w, GridPriorsParams* params) {
  for (auto [name, value] : {std::pair<const char*, int64_t>{"stride_h", stride_h}, {"stride_w", stride_w}}) {
    if (value < -kMaxStride || value > kMaxStride) {
      return Status::Error(name, " must be in [-2^24, 2^24] (exact in float32), got ", value);
    }
  }
  params->stride_h = stride_h;
  params->stride_w = stride_w;
  return Status::Ok();
}

Status CheckGridPriorsShapes(const Shape& base_anchors, const Shape& h_provider, const Shape& w_provider,
                             Shape* output) {
  if (base_anchors.size() != 2 || base_anchors[1] != 4) {
    return Status::Error("base_anchors must have shape [A, 4] (x1, y1, x2, y2 per base anchor), got ",
                         ShapeToString(base_anchors));
  }
  if (h_provider.size() != 1) {
    return Status::Error("h_provider must have rank 1 ([H]: its length is the grid's height), got shape ",
                         ShapeToString(h_provider));
  }
  if (w_provider.size() != 1) {
    return Status::Error("w_provider must have rank 1 ([W]: its length is the grid's width), got shape ",
                         ShapeToString(w_provider));
  }
  int64_t rows = 0, elements = 0;
  if (!CheckedNumElements({h_provider[0], w_provider[0], base_anchors[0]}, &rows) ||
      !CheckedNumElements({rows, 4}, &elements)) {
    return Status::Error("the output [H * W * A, 4] has more than 2^63 - 1 elements (H = ", h_provider[0],
                         ", W = ", w_provider[0], ", A = ", base_anchors[0], ")");
  }
  *output = {rows, 4};
  return Status::Ok();
}

}  // namespace opbridge
