// Multi-scale RoIAlign (torchvision.ops.MultiScaleRoIAlign, the RoI pooler of every torchvision
// R-CNN): parameters, validation and output shape, shared by every backend.
//
// Each RoI is assigned to one feature-pyramid level by torchvision's LevelMapper (FPN paper,
// eq. 1) and pooled from that level with RoIAlign at the level's scale.
#pragma once

#include <cstdint>
#include <vector>

#include "core/roi_align.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/roi_levels.h"

namespace opbridge {

struct MultiScaleRoiAlignParams {
  RoiAlignParams roi_align;           // output size, sampling ratio, aligned; mode "avg"
  std::vector<float> spatial_scales;  // one per level, finest first
  int64_t canonical_scale = 224;
  int64_t canonical_level = 4;
  // The levels the mapper clamps to, as torchvision derives them from the first and the last
  // scale: int(-log2(scale)) in float32.
  int64_t k_min = 0, k_max = 0;
};

// Attribute rules (session creation; aligned is 0 or 1: the values the manifest allows were checked by
// the glue's generated reader); derives k_min and k_max.
Status MakeMultiScaleRoiAlignParams(int64_t output_height, int64_t output_width, int64_t sampling_ratio,
                                    int64_t aligned, const std::vector<float>& spatial_scales,
                                    int64_t canonical_scale, int64_t canonical_level,
                                    MultiScaleRoiAlignParams* params);
// Shape rules: rois [R, 5]; one feature map [N, C, H_l, W_l] per scale, all with the same N and C.
Status CheckMultiScaleRoiAlignShapes(const MultiScaleRoiAlignParams& params, const Shape& rois,
                                     const std::vector<Shape>& features);
// The level of a box (x1, y1, x2, y2) as torchvision's LevelMapper computes it in float32, as
// an index into the feature maps; -1 when it has none (a NaN box, which torchvision's mapper
// leaves out, so its row stays 0).
int64_t MultiScaleRoiLevel(const MultiScaleRoiAlignParams& params, const float* box);
// The mapper's constants, for device code (core/roi_levels.h).
shared::TorchvisionLevelMapper LevelMapperOf(const MultiScaleRoiAlignParams& params);

}  // namespace opbridge
