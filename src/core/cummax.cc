#include "core/cummax.h"

namespace opbridge {

Status WrapCumMaxDim(int64_t dim, int64_t rank, int64_t* axis) {
  const int64_t scanned_rank = rank > 0 ? rank : 1;
  if (dim < -scanned_rank || dim >= scanned_rank) {
    if (rank == 0) {
      return Status::Error("dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got ", dim);
    }
    return Status::Error("dim must be in [", -scanned_rank, ", ", scanned_rank - 1, "] for an input of rank ", rank,
                         ", got ", dim);
  }
  *axis = dim < 0 ? dim + scanned_rank : dim;
  return Status::Ok();
}

ScanLayout CumMaxLayout(const Shape& shape, int64_t axis) {
  ScanLayout layout;
  if (shape.empty()) return layout;
  // No elements: nothing to scan (and the other dims' product, which may not fit, is not needed).
  for (int64_t d : shape) {
    if (d == 0) return ScanLayout{0, 0, 0};
  }
  for (int64_t i = 0; i < axis; ++i) layout.outer *= shape[i];
  layout.steps = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) layout.inner *= shape[i];
  return layout;
}

}  // namespace opbridge
