#include "core/multi_level_roi_align.h"

#include <algorithm>
#include <cmath>

namespace opbridge {

Status MakeRoiLevelParams(const std::vector<float>& featmap_strides, float roi_scale_factor, int64_t finest_scale,
                          RoiLevelParams* params) {
  const int64_t levels = static_cast<int64_t>(featmap_strides.size());
  if (levels == 0) return Status::Error("featmap_strides must list one stride per feature map, got none");
  if (levels > kMultiLevelRoiAlignMaxLevels) {
    return Status::Error("featmap_strides lists ", levels, " strides; at most ", kMultiLevelRoiAlignMaxLevels,
                         " feature maps are supported (the TensorRT plugin's limit)");
  }
  for (int64_t l = 0; l < levels; ++l) {
    if (!(std::isfinite(featmap_strides[l]) && featmap_strides[l] > 0.0f)) {
      return Status::Error("featmap_strides[", l, "] must be a finite number > 0, got ", featmap_strides[l]);
    }
  }
  if (finest_scale < 1) return Status::Error("finest_scale must be >= 1, got ", finest_scale);
  if (!std::isfinite(roi_scale_factor)) {
    return Status::Error("roi_scale_factor must be a finite number (<= 0: boxes as given), got ", roi_scale_factor);
  }
  params->featmap_strides = featmap_strides;
  params->spatial_scales.clear();
  for (int64_t l = 0; l < levels; ++l) {
    // mmdet and mmrotate build each level's RoI layer with spatial_scale = 1 / s in Python
    // (double), which mmcv passes to its kernel as a float. A tiny stride gives an infinite scale.
    const float scale = static_cast<float>(1.0 / static_cast<double>(featmap_strides[l]));
    if (!std::isfinite(scale)) {
      return Status::Error("featmap_strides[", l, "] = ", featmap_strides[l],
                           " is too small: 1 / stride must be a finite float");
    }
    params->spatial_scales.push_back(scale);
  }
  params->finest_scale = finest_scale;
  params->roi_scale_factor = roi_scale_factor;
  // A factor of 1 is what mmdeploy's exporters write for the extractors' roi_scale_factor=None,
  // where they do not rescale; rescaling by 1 would only move coordinates by rounding.
  params->rescale = roi_scale_factor > 0.0f && roi_scale_factor != 1.0f;
  return Status::Ok();
}

Status MakeMultiLevelRoiAlignParams(int64_t output_height, int64_t output_width, int64_t pool_mode,
                                    int64_t sampling_ratio, const std::vector<float>& featmap_strides,
                                    float roi_scale_factor, int64_t finest_scale, int64_t aligned,
                                    MultiLevelRoiAlignParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(MakeRoiLevelParams(featmap_strides, roi_scale_factor, finest_scale, params));
  RoiAlignParams& p = params->roi_align;
  p.output_height = output_height;
  p.output_width = output_width;
  p.sampling_ratio = sampling_ratio;
  p.mode = pool_mode == 0 ? RoiPoolMode::kMax : RoiPoolMode::kAvg;
  p.aligned = aligned == 1;
  for (float scale : params->spatial_scales) {
    p.spatial_scale = scale;
    OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignParams(p));
  }
  return Status::Ok();
}

Status CheckFeatureLevelShapes(const std::vector<Shape>& features, size_t num_levels, const char* strides_name) {
  if (features.size() != num_levels) {
    return Status::Error("the node has ", features.size(), " feature maps but ", strides_name, " lists ", num_levels,
                         " strides; they must agree (one stride per map)");
  }
  for (size_t l = 0; l < features.size(); ++l) {
    const Shape& f = features[l];
    if (f.size() != 4) {
      return Status::Error("feature map ", l, " must have rank 4 [N, C, H, W], got shape ", ShapeToString(f));
    }
    if (f[0] != features[0][0] || f[1] != features[0][1]) {
      return Status::Error("feature map ", l, " has shape ", ShapeToString(f),
                           "; every map must have the N and C of map 0, ", ShapeToString(features[0]));
    }
  }
  return Status::Ok();
}

Status CheckMultiLevelRoiAlignShapes(const MultiLevelRoiAlignParams& params, const Shape& rois,
                                     const std::vector<Shape>& features) {
  if (rois.size() != 2 || rois[1] != 5) {
    return Status::Error("rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape ",
                         ShapeToString(rois));
  }
  return CheckFeatureLevelShapes(features, params.featmap_strides.size(), "featmap_strides");
}

}  // namespace opbridge
