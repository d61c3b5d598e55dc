// The rules of axis-aligned NMS as host-and-device functions: the score order's sort key and
// torchvision's IoU suppression rule. The CPU kernels (kernels/cpu/greedy_nms.cc, nms.h) and the
// CUDA kernels (kernels/cuda/nms.cu) both use these, so that both keep the same boxes.
#pragma once

#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// A key whose ascending order is the descending order of scores, as torch.sort(descending=True)
// orders them: NaN first (key 0, which no number maps to), then +inf ... -inf, with -0 mapped to
// +0 so that the two tie. No score maps to kNotACandidate, which sorts after every score.
constexpr uint32_t kNotACandidate = 0xFFFFFFFFu;
OPBRIDGE_HD inline uint32_t DescendingScoreKey(float score) {
  if (IsNan(score)) return 0;
  uint32_t bits = FloatBits(score);
  if (bits == 0x80000000u) bits = 0;
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ~ascending;
}

// One box as the suppression rule reads it: its corners and its area (w + offset) * (h + offset).
struct NmsBox {
  float x1, y1, x2, y2, area;
};

OPBRIDGE_HD inline NmsBox MakeNmsBox(const float* box, float offset) {
  return {box[0], box[1], box[2], box[3], (box[2] - box[0] + offset) * (box[3] - box[1] + offset)};
}

// Whether kept box i suppresses the later box j under torchvision's and mmcv's CPU rule: IoU >
// threshold, with their operand orders, which decide NaN results (std::max(0, NaN) is 0). The
// threshold is in [0, 1] (CheckIouThreshold), so pairs without overlap need no division: an
// intersection of 0 (or NaN, from 0 * inf) gives an IoU of 0, -0 or NaN, never > threshold. Most
// pairs of a scene do not overlap, and a float division is the rule's dearest operation on a GPU.
OPBRIDGE_HD inline bool TorchvisionSuppresses(const NmsBox& i, const NmsBox& j, float offset, float threshold) {
  const float xx1 = Max(i.x1, j.x1);
  const float yy1 = Max(i.y1, j.y1);
  const float xx2 = Min(i.x2, j.x2);
  const float yy2 = Min(i.y2, j.y2);
  const float w = Max(0.0f, xx2 - xx1 + offset);
  const float h = Max(0.0f, yy2 - yy1 + offset);
  const float inter = w * h;
  if (!(inter > 0.0f)) return false;
  return inter / (i.area + j.area - inter) > threshold;
}

// mmdeploy NMSMatch's rule: nms_match_iou(kept, later) >= threshold, operation for operation: the
// intersection, the areas (unclamped, offset 0) and the union in float32; mmdeploy's `auto eps =
// 1e-10` is a double, so the union plus eps and the division are double, and the quotient is
// rounded to float when nms_match_iou returns it. Operand orders are mmdeploy's (std::max(0, NaN)
// is 0). The CPU kernel (kernels/cpu/nms_match.h) and the CUDA kernels both use it. Pairs without
// overlap (inter = +0, most of a scene's) skip the double division: 0 / (union + eps) is +-0, or
// NaN for a NaN union (union + eps is never 0: no float is -1e-10), so the answer is whether the
// threshold is <= 0 and the union a number; float64 division is costly on GPUs (1/64 of the float
// rate on sm_86 and sm_89).
OPBRIDGE_HD inline bool MmdeployMatchSuppresses(const NmsBox& i, const NmsBox& j, float threshold) {
  const float inter_x1 = Max(i.x1, j.x1);
  const float inter_y1 = Max(i.y1, j.y1);
  const float inter_x2 = Min(i.x2, j.x2);
  const float inter_y2 = Min(i.y2, j.y2);
  const float w = Max(0.0f, inter_x2 - inter_x1);
  const float h = Max(0.0f, inter_y2 - inter_y1);
  const float inter = w * h;  // +0, positive, inf or NaN (0 * inf): w and h are +0 or more
  const float union_area = i.area + j.area - inter;
  if (inter == 0.0f) return threshold <= 0.0f && union_area == union_area;
  const float iou = static_cast<float>(inter / (static_cast<double>(union_area) + 1e-10));
  return iou >= threshold;
}

struct MatchRule {
  float threshold;
  OPBRIDGE_HD bool operator()(const NmsBox& kept, const NmsBox& later) const {
    return MmdeployMatchSuppresses(kept, later, threshold);
  }
};

// TorchvisionSuppresses as the rule the tiles take (nms_tiles.h).
struct TorchvisionRule {
  float offset, threshold;
  OPBRIDGE_HD bool operator()(const NmsBox& kept, const NmsBox& later) const {
    return TorchvisionSuppresses(kept, later, offset, threshold);
  }
};

}  // namespace opbridge::shared
