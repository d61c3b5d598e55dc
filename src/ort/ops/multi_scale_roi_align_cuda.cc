// Multi-scale RoIAlign ORT glue, CUDA twin: opbridge::MultiScaleRoiAlign on the CUDA execution
// provider (the kernel of kernels/cuda/multi_level_roi_align.h with torchvision's LevelMapper). The
// same checks as the CPU op's Compute, except those of the RoIs' values, which are in device memory:
// a bad batch index gives a NaN row instead.
#include "ort/ops/multi_level_roi_align.h"
#include "ort/ops/multi_scale_roi_align.h"

namespace opbridge::ort {

Status MultiScaleRoiAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(PrepareMultiLevel(api, ctx, params_.roi_align.output_height, params_.roi_align.output_width,
                                             [this](const Shape& rois, const std::vector<Shape>& features) {
                                               return CheckMultiScaleRoiAlignShapes(params_, rois, features);
                                             },
                                             &t));
  if (t.output == nullptr) return Status::Ok();
  shared::RoiLeveling leveling{};
  leveling.kind = shared::RoiLeveling::kTorchvision;
  leveling.torchvision = LevelMapperOf(params_);
  return RunLeveledRoiAlignCuda(api, ctx, t, params_.roi_align, params_.spatial_scales, leveling);
}

}  // namespace opbridge::ort
