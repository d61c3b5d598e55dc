// Soft non-maximum suppression: parameters, validation and output shape, shared by every backend.
//
// Numerics follow mmcv's soft_nms (softnms_cpu), which mmcv's ORT op also implements.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

enum class SoftNmsMethod { kNaive = 0, kLinear = 1, kGaussian = 2 };

struct SoftNmsParams {
  float iou_threshold = 0.3f;
  float sigma = 0.5f;
  float min_score = 1e-3f;
  SoftNmsMethod method = SoftNmsMethod::kLinear;
  int64_t offset = 0;  // 0 or 1: added to box widths and heights (legacy pixel convention)
};

// Attribute rules on the raw values, checked when the session is created (method and offset: the
// values the manifest allows were checked by the glue's generated reader).
Status MakeSoftNmsParams(float iou_threshold, float sigma, float min_score, int64_t method,
                         int64_t offset, SoftNmsParams* params);
// Shape rules: boxes [N, 4], scores [N].
Status CheckSoftNmsShapes(const Shape& boxes, const Shape& scores);

}  // namespace opbridge
