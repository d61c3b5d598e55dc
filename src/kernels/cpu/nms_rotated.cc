// Rotated NMS CPU kernels (see nms_rotated.h): RotatedProblem (nms_problems.h, mmcv's rotated IoU
// and the treatment of degenerate boxes) in the shared drivers (nms_drivers.h).
#include "kernels/cpu/nms_rotated.h"

#include "kernels/cpu/nms_problems.h"

namespace opbridge::cpu {

template <class T>
Status NmsRotated(const NmsRotatedParams& params, const T* boxes, const T* scores, const int64_t* categories,
                  int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner) {
  RotatedProblem prototype{};
  prototype.threshold = params.iou_threshold;
  prototype.inclusive = shared::kMmcvNmsRotated.inclusive;
  prototype.min_area = shared::kMmcvNmsRotated.min_area;
  prototype.clockwise = params.clockwise;
  return KeepPerCategory(prototype, boxes, scores, categories, n, keep, num_kept, scratch, runner);
}

template <class T>
Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const T* boxes, const T* scores,
                            int64_t batch, int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                            ScratchAllocator& scratch, const TaskRunner& runner) {
  RotatedProblem prototype{};
  prototype.threshold = params.iou_threshold;
  prototype.inclusive = shared::kMmdeployNmsRotated.inclusive;
  prototype.min_area = shared::kMmdeployNmsRotated.min_area;
  prototype.clockwise = true;
  return KeepPerBatchAndClass(prototype, boxes, 5, scores, batch, classes, n, params.score_threshold, n, kept_boxes,
                              kept_counts, scratch, runner);
}

#define OPBRIDGE_NMS_ROTATED(T)                                                                                  \
  template Status NmsRotated<T>(const NmsRotatedParams&, const T*, const T*, const int64_t*, int64_t, int64_t*,  \
                                int64_t*, ScratchAllocator&, const TaskRunner&);                                 \
  template Status MulticlassNmsRotated<T>(const MulticlassNmsRotatedParams&, const T*, const T*, int64_t, int64_t, \
                                          int64_t, int32_t*, int64_t*, ScratchAllocator&, const TaskRunner&);
OPBRIDGE_NMS_ROTATED(float)
OPBRIDGE_NMS_ROTATED(shared::Float16)
OPBRIDGE_NMS_ROTATED(shared::BFloat16)
#undef OPBRIDGE_NMS_ROTATED

}  // namespace opbridge::cpu
