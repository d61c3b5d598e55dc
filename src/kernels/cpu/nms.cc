// Axis-aligned NMS CPU kernels (see nms.h): AxisAlignedProblem (nms_problems.h, torchvision's IoU
// rule) in the shared drivers (nms_drivers.h).
#include "kernels/cpu/nms.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/nms_drivers.h"
#include "kernels/cpu/nms_problems.h"

namespace opbridge::cpu {

template <class T>
Status Nms(const NmsParams& params, const T* boxes, const T* scores, const int64_t* categories,
           int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner) {
  AxisAlignedProblem prototype{};
  prototype.offset = static_cast<float>(params.offset);
  prototype.threshold = params.iou_threshold;
  return KeepPerCategory(prototype, boxes, scores, categories, n, keep, num_kept, scratch, runner);
}

int64_t MulticlassNmsCapacity(const MulticlassNmsParams& params, int64_t n) {
  return params.max_output_boxes_per_class < 0 ? n : std::min(n, params.max_output_boxes_per_class);
}

template <class T>
Status MulticlassNms(const MulticlassNmsParams& params, const T* boxes, const T* scores, int64_t batch,
                     int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                     ScratchAllocator& scratch, const TaskRunner& runner) {
  AxisAlignedProblem prototype{};
  prototype.offset = 0.0f;
  prototype.threshold = params.iou_threshold;
  return KeepPerBatchAndClass(prototype, boxes, 4, scores, batch, classes, n, params.score_threshold,
                              MulticlassNmsCapacity(params, n), kept_boxes, kept_counts, scratch, runner);
}

#define OPBRIDGE_NMS(T)                                                                                         \
  template Status Nms<T>(const NmsParams&, const T*, const T*, const int64_t*, int64_t, int64_t*, int64_t*,      \
                         ScratchAllocator&, const TaskRunner&);                                                \
  template Status MulticlassNms<T>(const MulticlassNmsParams&, const T*, const T*, int64_t, int64_t, int64_t,     \
                                   int32_t*, int64_t*, ScratchAllocator&, const TaskRunner&);
OPBRIDGE_NMS(float)
OPBRIDGE_NMS(shared::Float16)
OPBRIDGE_NMS(shared::BFloat16)
#undef OPBRIDGE_NMS

}  // namespace opbridge::cpu
