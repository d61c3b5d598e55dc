// Corner pooling (CornerNet; mmcv's CornerPool / MMCVCornerPool): parameters, validation and
// output shape, shared by every backend.
//
// Each mode is a running maximum along one axis of [N, C, H, W] (see docs/ops/corner_pool.md):
// top: out[h] = max(in[h..H-1]) along H; bottom: max(in[0..h]); left: out[w] = max(in[w..W-1])
// along W; right: max(in[0..w]). The maximum follows torch.cummax (NaN propagates).
#pragma once

#include <cstdint>

#include "core/cummax.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// mmcv's mode codes.
enum class CornerPoolMode : int64_t { kTop = 0, kBottom = 1, kLeft = 2, kRight = 3 };

struct CornerPoolParams {
  CornerPoolMode mode = CornerPoolMode::kTop;
};

// Shape rule: input [N, C, H, W].
Status CheckCornerPoolShape(const Shape& input);
// input's shape, [N, C, H, W].
Shape CornerPoolOutputShape(const Shape& input);
// The scan of `mode` over input [N, C, H, W]: along H ([N * C, H, W]) or along W
// ([N * C * H, W, 1]); *reverse for top and left (from the bottom row or the last column).
ScanLayout CornerPoolLayout(const Shape& input, CornerPoolMode mode, bool* reverse);

}  // namespace opbridge
