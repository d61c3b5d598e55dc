// Cumulative maximum / minimum CPU kernel: the input viewed as [outer, steps, inner] around the
// scanned axis, scanned forward by the running-extreme engine (extreme_scan.h, which also says
// how the work is laid out and vectorised).
#include "kernels/cpu/cummax.h"

#include "kernels/cpu/extreme_scan.h"

namespace opbridge::cpu {

template <class T>
Status CumMax(const CumMaxParams& params, const T* input, const Shape& shape, T* values, int64_t* indices,
              const TaskRunner& runner) {
  int64_t axis = 0;
  OPBRIDGE_RETURN_IF_ERROR(WrapCumMaxDim(params.dim, static_cast<int64_t>(shape.size()), &axis));
  return ScanAxis(params.extreme, input, CumMaxLayout(shape, axis), false, values, indices, runner);
}

template Status CumMax<float>(const CumMaxParams&, const float*, const Shape&, float*, int64_t*, const TaskRunner&);
template Status CumMax<double>(const CumMaxParams&, const double*, const Shape&, double*, int64_t*,
                               const TaskRunner&);
template Status CumMax<int32_t>(const CumMaxParams&, const int32_t*, const Shape&, int32_t*, int64_t*,
                                const TaskRunner&);
template Status CumMax<int64_t>(const CumMaxParams&, const int64_t*, const Shape&, int64_t*, int64_t*,
                                const TaskRunner&);

}  // namespace opbridge::cpu
