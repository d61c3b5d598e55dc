// The RoI level mappers of the multi-level RoI ops as host-and-device functions: torchvision's
// LevelMapper (MultiScaleRoIAlign) and mmdet's map_roi_levels and roi_rescale (multi-level
// RoIAlign), every step in float32 as those compute it. The core functions (core/
// multi_scale_roi_align.cc, core/multi_level_roi_align.cc) and the CUDA kernels call these.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// log2 of a float32. On the host glibc's log2f (what the CPU kernels have always used); on the
// device CUDA's double log2 rounded to float, since CUDA's log2f may be off by an ulp: both are
// then correctly rounded but in cases of probability ~2^-29, so a level (a floor of it near an
// integer) agrees between the CPU and the GPU.
OPBRIDGE_HD inline float Log2f(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(log2(static_cast<double>(x)));
#else
  return log2f(x);
#endif
}

// torchvision's LevelMapper: the level of box (x1, y1, x2, y2) as an index into the feature maps,
// -1 when it has none (a NaN box, which torchvision's mapper leaves out, so its row stays 0).
// s = sqrt(box_area); floor(canonical_level + log2(s / canonical_scale) + eps), clamped to
// [k_min, k_max], minus k_min. Every step is a float32 tensor operation in torchvision.
struct TorchvisionLevelMapper {
  int64_t canonical_scale, canonical_level;
  int64_t k_min, k_max;  // int(-log2(first scale)), int(-log2(last scale))
  int64_t num_levels;
};
OPBRIDGE_HD inline int64_t TorchvisionRoiLevel(const TorchvisionLevelMapper& m, const float* box) {
  const float area = (box[2] - box[0]) * (box[3] - box[1]);
  const float s = sqrtf(area);
  const float level = floorf(static_cast<float>(m.canonical_level) +
                             Log2f(s / static_cast<float>(m.canonical_scale)) + 1e-6f);
  if (IsNan(level)) return -1;
  // torch.clamp(x, min, max) is min(max(x, min), max): with min > max every value becomes max.
  const float clamped = Min(Max(level, static_cast<float>(m.k_min)), static_cast<float>(m.k_max));
  const int64_t index = static_cast<int64_t>(clamped) - m.k_min;
  return index >= 0 && index < m.num_levels ? index : -1;
}

// mmdet's map_roi_levels for a RoI of scale sqrt(area), every step in float32 as mmdet computes
// it: clamp(floor(log2(scale / finest_scale + 1e-6)), 0, num_levels - 1). -1 when that is NaN (a
// NaN coordinate, or a negative area: one side inverted): mmdet's .long() of NaN matches no level
// and the RoI keeps the zero row its output starts with.
OPBRIDGE_HD inline int64_t MmdetRoiLevel(float scale, int64_t finest_scale, int64_t num_levels) {
  // torch: floor(log2(scale / finest_scale + 1e-6)) on a float32 tensor, the Python int and
  // float converted to float32.
  const float level = floorf(Log2f(scale / static_cast<float>(finest_scale) + 1e-6f));
  if (IsNan(level)) return -1;
  // clamp(min=0, max=L-1) before the conversion to an integer (an infinite scale: the last level).
  return static_cast<int64_t>(Min(Max(level, 0.0f), static_cast<float>(num_levels - 1)));
}

// mmdet's BaseRoIExtractor.roi_rescale of a box (x1, y1, x2, y2), in float32: the centre stays,
// the sides are multiplied by `factor` (no +1 convention).
OPBRIDGE_HD inline void MmdetRoiRescale(const float* box, float factor, float* rescaled) {
  const float cx = (box[0] + box[2]) * 0.5f;
  const float cy = (box[1] + box[3]) * 0.5f;
  const float half_w = (box[2] - box[0]) * factor * 0.5f;
  const float half_h = (box[3] - box[1]) * factor * 0.5f;
  rescaled[0] = cx - half_w;
  rescaled[1] = cy - half_h;
  rescaled[2] = cx + half_w;
  rescaled[3] = cy + half_h;
}

// mmdet's scale of a RoI row (batch_index, x1, y1, x2, y2): sqrt((x2 - x1) * (y2 - y1)).
OPBRIDGE_HD inline float MmdetBoxScale(const float* roi) { return sqrtf((roi[3] - roi[1]) * (roi[4] - roi[2])); }

}  // namespace opbridge::shared
