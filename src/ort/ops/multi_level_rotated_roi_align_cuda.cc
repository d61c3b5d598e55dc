// Multi-level rotated RoIAlign ORT glue, CUDA twin: opbridge::MultiLevelRotatedRoiAlign and
// mmdeploy::MMCVMultiLevelRotatedRoiAlign on the CUDA execution provider. The same checks as the CPU
// op's Compute, except those of the RoIs' values, which are in device memory: the kernel gives NaN
// rows there instead (kernels/cuda/roi_align_rotated.h). Every map in one launch (at most 10, the
// op's limit).
#include <vector>

#include "kernels/cuda/roi_align_rotated.h"
#include "ort/cuda_glue.h"
#include "ort/ops/multi_level_roi_align.h"
#include "ort/ops/multi_level_rotated_roi_align.h"

namespace opbridge::ort {

Status MultiLevelRotatedRoiAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(PrepareMultiLevel(
      api, ctx, params_.roi_align.output_height, params_.roi_align.output_width,
      [this](const Shape& rois, const std::vector<Shape>& features) { return CheckShapes(rois, features); }, &t));
  if (t.output == nullptr) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  // All of them (at most 10), float32 only (the manifest's dtypes).
  const shared::FeatureMaps<float> maps = FeatureMapsOf<float>(t, 0, params_.spatial_scales);
  cuda::RotatedLeveling leveling;
  leveling.by_scale = true;
  leveling.finest_scale = params_.finest_scale;
  leveling.rescale = params_.rescale;
  leveling.roi_scale_factor = params_.roi_scale_factor;
  return cuda::LeveledRoiAlignRotated(params_.roi_align, maps, leveling, t.batch, t.channels, t.rois.Data<float>(),
                                      t.num_rois, static_cast<float*>(t.output), cuda.scratch(), cuda.stream());
}

}  // namespace opbridge::ort
