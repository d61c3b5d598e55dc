// Corner pooling CPU kernel: a running maximum along H (top, bottom) or W (left, right) of every
// plane, values only, by the running-extreme engine that also computes cummax
// (extreme_scan.h): top and left scan from the bottom row and the last column, which is
// torch.cummax of the flipped input flipped back, as mmcv's CornerPool computes it. Along H the
// rows of a plane are scanned as vectorised lanes; along W each row is one scan.
#include "kernels/cpu/corner_pool.h"

#include "kernels/cpu/extreme_scan.h"

namespace opbridge::cpu {

Status CornerPool(const CornerPoolParams& params, const float* input, const Shape& shape, float* output,
                  const TaskRunner& runner) {
  OPBRIDGE_RETURN_IF_ERROR(CheckCornerPoolShape(shape));
  bool reverse = false;
  const ScanLayout layout = CornerPoolLayout(shape, params.mode, &reverse);
  return ScanAxis(Extreme::kMax, input, layout, reverse, output, nullptr, runner);
}

}  // namespace opbridge::cpu
