#include "core/multi_scale_roi_align.h"

#include <cmath>

namespace opbridge {

Status MakeMultiScaleRoiAlignParams(int64_t output_height, int64_t output_width, int64_t sampling_ratio,
                                    int64_t aligned, const std::vector<float>& spatial_scales,
                                    int64_t canonical_scale, int64_t canonical_level,
                                    MultiScaleRoiAlignParams* params) {
  if (spatial_scales.empty()) return Status::Error("spatial_scales must list one scale per feature map, got none");
  for (size_t l = 0; l < spatial_scales.size(); ++l) {
    if (!(std::isfinite(spatial_scales[l]) && spatial_scales[l] > 0.0f)) {
      return Status::Error("spatial_scales[", l, "] must be a finite number > 0, got ", spatial_scales[l]);
    }
  }
  if (canonical_scale < 1) return Status::Error("canonical_scale must be >= 1, got ", canonical_scale);
  RoiAlignParams& p = params->roi_align;
  p.output_height = output_height;
  p.output_width = output_width;
  p.sampling_ratio = sampling_ratio;
  p.aligned = aligned == 1;
  p.mode = RoiPoolMode::kAvg;
  p.spatial_scale = spatial_scales[0];
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignParams(p));
  params->spatial_scales = spatial_scales;
  params->canonical_scale = canonical_scale;
  params->canonical_level = canonical_level;
  // torchvision: lvl_min = -torch.log2(torch.tensor(scales[0], dtype=torch.float32)).item(),
  // then int(lvl_min), which truncates toward zero.
  params->k_min = static_cast<int64_t>(-std::log2(spatial_scales.front()));
  params->k_max = static_cast<int64_t>(-std::log2(spatial_scales.back()));
  return Status::Ok();
}

Status CheckMultiScaleRoiAlignShapes(const MultiScaleRoiAlignParams& params, const Shape& rois,
                                     const std::vector<Shape>& features) {
  if (rois.size() != 2 || rois[1] != 5) {
    return Status::Error("rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape ",
                         ShapeToString(rois));
  }
  if (features.size() != params.spatial_scales.size()) {
    return Status::Error("the node has ", features.size(), " feature maps but spatial_scales lists ",
                         params.spatial_scales.size(), " scales; they must agree (one scale per map)");
  }
  for (size_t l = 0; l < features.size(); ++l) {
    const Shape& f = features[l];
    if (f.size() != 4) {
      return Status::Error("feature map ", l, " must have rank 4 [N, C, H, W], got shape ", ShapeToString(f));
    }
    if (f[0] != features[0][0] || f[1] != features[0][1]) {
      return Status::Error("feature map ", l, " has shape ", ShapeToString(f), "; every map must have the N and C of map 0, ",
                           ShapeToString(features[0]));
    }
  }
  return Status::Ok();
}

shared::TorchvisionLevelMapper LevelMapperOf(const MultiScaleRoiAlignParams& params) {
  return {params.canonical_scale, params.canonical_level, params.k_min, params.k_max,
          static_cast<int64_t>(params.spatial_scales.size())};
}

int64_t MultiScaleRoiLevel(const MultiScaleRoiAlignParams& params, const float* box) {
  return shared::TorchvisionRoiLevel(LevelMapperOf(params), box);
}

}  // namespace opbridge
