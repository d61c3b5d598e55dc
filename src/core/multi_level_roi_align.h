// Multi-level RoIAlign (mmdet's SingleRoIExtractor over mmcv's RoIAlign; mmdeploy's TensorRT
// plugin MMCVMultiLevelRoiAlign): parameters, validation and mmdet's level mapper, shared by
// every backend.
//
// Each RoI is assigned to one feature map by mmdet's map_roi_levels (finest_scale rule), its
// box is optionally rescaled about its centre (mmdet's roi_rescale), and it is pooled from that
// map with RoIAlign at 1 / stride. See docs/ops/multi_level_roi_align.md for where opbridge
// differs from the plugin.
#pragma once

#include <cstdint>
#include <vector>

#include "core/roi_align.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/roi_levels.h"

namespace opbridge {

// The plugin keeps its per-level data in arrays of 10 (kMAX_FEATMAP_SIZE): a graph with more
// feature maps does not run there, so opbridge refuses it too rather than accept a graph
// TensorRT cannot build.
constexpr int64_t kMultiLevelRoiAlignMaxLevels = 10;

// The level mapping the multi-level RoI ops share (mmdet's SingleRoIExtractor and mmrotate's
// RotatedSingleRoIExtractor): the maps' strides, the finest_scale rule and the optional rescale.
struct RoiLevelParams {
  std::vector<float> featmap_strides;  // one per feature map, as the node lists them
  std::vector<float> spatial_scales;   // 1 / stride in float32, as mmcv's RoI layers receive it
  int64_t finest_scale = 56;
  // Boxes are rescaled by this factor when it is > 0 and not 1 (mmdet's / mmrotate's
  // roi_rescale); otherwise they are pooled as given.
  float roi_scale_factor = -1.0f;
  bool rescale = false;
};

// Attribute rules of the level mapping (session creation): 1 to 10 finite strides > 0 whose
// inverses are finite floats, finest_scale >= 1, a finite roi_scale_factor.
Status MakeRoiLevelParams(const std::vector<float>& featmap_strides, float roi_scale_factor, int64_t finest_scale,
                          RoiLevelParams* params);

struct MultiLevelRoiAlignParams : RoiLevelParams {
  RoiAlignParams roi_align;  // output size, sampling ratio, pool mode, aligned
};

// Attribute rules (session creation). pool_mode: 0 max, 1 avg (the plugin's codes; the values the
// manifest allows were checked by the glue's generated reader).
Status MakeMultiLevelRoiAlignParams(int64_t output_height, int64_t output_width, int64_t pool_mode,
                                    int64_t sampling_ratio, const std::vector<float>& featmap_strides,
                                    float roi_scale_factor, int64_t finest_scale, int64_t aligned,
                                    MultiLevelRoiAlignParams* params);

// Feature-map rules shared by the multi-level RoI ops: `num_levels` maps (one per entry of the
// attribute `strides_name`), each [N, C, H_l, W_l] with the N and C of map 0.
Status CheckFeatureLevelShapes(const std::vector<Shape>& features, size_t num_levels, const char* strides_name);
// Shape rules: rois [R, 5]; the feature maps as above.
Status CheckMultiLevelRoiAlignShapes(const MultiLevelRoiAlignParams& params, const Shape& rois,
                                     const std::vector<Shape>& features);

// mmdet's map_roi_levels and roi_rescale, host-and-device code the CUDA kernel runs too
// (core/roi_levels.h). (mmdet's extractors skip the mapper when there is one feature
// map; callers decide that.)
using shared::MmdetRoiLevel;
using shared::MmdetRoiRescale;

}  // namespace opbridge
