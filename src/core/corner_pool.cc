#include "core/corner_pool.h"

namespace opbridge {

Status CornerPoolModeFromInt(int64_t mode, CornerPoolMode* out) {
  if (mode < 0 || mode > 3) {
    return Status::Error("mode must be 0 (top), 1 (bottom), 2 (left) or 3 (right), got ", mode);
  }
  *out = static_cast<CornerPoolMode>(mode);
  return Status::Ok();
}

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
