#include "core/corner_pool.h"

namespace opbridge {

Status CheckCornerPoolShape(const Shape& input) {
  if (input.size() != 4) {
    return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(input));
  }
  return Status::Ok();
}

Shape CornerPoolOutputShape(const Shape& input) { return input; }

ScanLayout CornerPoolLayout(const Shape& input, CornerPoolMode mode, bool* reverse) {
  *reverse = mode == CornerPoolMode::kTop || mode == CornerPoolMode::kLeft;
  const bool along_h = mode == CornerPoolMode::kTop || mode == CornerPoolMode::kBottom;
  return CumMaxLayout(input, along_h ? 2 : 3);
}

}  // namespace opbridge
