#include "core/work_limits.h"

namespace opbridge {

Status CheckCallOutputElements(const Shape& shape) {
  int64_t elements = 0;
  if (!CheckedNumElements(shape, &elements) || elements > kMaxCallOutputElements) {
    return Status::Error("the output ", ShapeToString(shape), " would hold more than the limit of 2^30 (",
                         kMaxCallOutputElements, ") elements per call");
  }
  return Status::Ok();
}

Status CallSampleWork::Add(int64_t samples) {
  // samples <= 2^31 per RoI (CheckRoiSampleBudget), and the total stays below the limit: no overflow.
  samples_ += samples;
  if (ExceedsCallWork(samples_, channels_)) {
    return Status::Error("the rois need at least ", samples_, " samples for each of ", channels_,
                         " channels, more than the limit of 2^36 (", kMaxCallSampleWork,
                         ") samples x channels per call; pass a smaller positive sampling_ratio or fewer rois");
  }
  return Status::Ok();
}

}  // namespace opbridge
