// The rules of rotated NMS as host-and-device code: how a box enters (mmcv's clockwise flag, the
// degenerate boxes that take no part) and when a kept box suppresses a later one (mmcv's rotated
// IoU, inclusive for mmcv's nms_rotated, strict for mmdeploy's NMSRotated). The CPU kernels
// (kernels/cpu/nms_problems.h, RotatedProblem) and the CUDA kernels (kernels/cuda/nms.cu) both use
// these, so that both keep the same boxes.
#pragma once

#include <stdint.h>

#include "core/half_storage.h"
#include "core/host_device.h"
#include "kernels/shared/box_iou_rotated.h"

namespace opbridge::shared {

// A candidate as the rule reads it: the prepared box, and whether it takes part. A box that does
// not (active false) is never suppressed and suppresses nothing (its IoU counts as 0), and is kept
// in its place, as mmcv's and mmdeploy's guards have it.
struct RotatedNmsBox {
  RotatedBox box;
  bool active;
};

// Box (cx, cy, w, h, theta): theta negated first when !clockwise (mmcv's clockwise=False); active
// when every value and the area w * h are finite and the area is >= min_area (mmcv's 1e-14, a
// double: min_area > 0) or > 0 (min_area 0, mmdeploy's).
OPBRIDGE_HD inline RotatedNmsBox MakeRotatedNmsBox(const float* box5, bool clockwise, double min_area) {
  float b[5];
  for (int v = 0; v < 5; ++v) b[v] = box5[v];
  if (!clockwise) b[4] = -b[4];
  RotatedNmsBox r;
  r.box = MakeRotatedBox(b);
  const float area = b[2] * b[3];
  const bool finite =
      IsFinite(b[0]) && IsFinite(b[1]) && IsFinite(b[2]) && IsFinite(b[3]) && IsFinite(b[4]) && IsFinite(area);
  r.active = finite && (min_area > 0.0 ? static_cast<double>(area) >= min_area : area > 0.0f);
  return r;
}

// Whether kept box `kept` suppresses the later box `later`: their IoU (kept box first, as mmcv and
// mmdeploy pass them: the intersection is not symmetric in its last bits; 0 when either takes no
// part) >= threshold (inclusive) or > threshold.
struct RotatedNmsRule {
  float threshold;
  bool inclusive;
  OPBRIDGE_HD bool operator()(const RotatedNmsBox& kept, const RotatedNmsBox& later) const {
    const float iou = kept.active && later.active ? RotatedIou(kept.box, later.box) : 0.0f;
    return inclusive ? iou >= threshold : iou > threshold;
  }
};

// The three ops' conventions, which the CPU and CUDA kernels both take from here: mmcv's nms_rotated
// (IoU >= threshold, mmcv's guard: area >= 1e-14; its clockwise flag is the node's), mmdeploy's
// NMSRotated (IoU > threshold, area > 0, theta as given) and the rotated TensorRT batched NMS plugin
// (IoU > threshold, the plugin's copy of mmcv's guard, theta as given).
struct RotatedNmsConvention {
  bool inclusive;
  double min_area;
};
constexpr RotatedNmsConvention kMmcvNmsRotated{true, 1e-14};
constexpr RotatedNmsConvention kMmdeployNmsRotated{false, 0.0};
constexpr RotatedNmsConvention kTrtBatchedRotatedNms{false, 1e-14};

// Where the boxes of problem p are (NmsBoxSource's layout, 5 values a box, stored as T: float,
// Float16 or BFloat16, read as the floats they hold), and how they enter (MakeRotatedNmsBox's
// clockwise and min_area).
template <class T>
struct RotatedBoxSource {
  const T* boxes;
  int64_t classes, image_stride, class_stride, box_stride;
  bool clockwise;
  double min_area;
  OPBRIDGE_HD RotatedNmsBox BoxOf(int64_t p, int32_t position) const {
    const T* box = boxes + (p / classes) * image_stride + (p % classes) * class_stride +
                   static_cast<int64_t>(position) * box_stride;
    float b[5];
    LoadRun(box, 5, b);
    return MakeRotatedNmsBox(b, clockwise, min_area);
  }
};

}  // namespace opbridge::shared
