// Multi-level rotated RoIAlign ORT glue: opbridge::MultiLevelRotatedRoiAlign and
// mmdeploy::MMCVMultiLevelRotatedRoiAlign.
#include "ort/ops/multi_level_rotated_roi_align.h"

#include "kernels/cpu/multi_level_rotated_roi_align.h"
#include "ort/ops/multi_level_roi_align.h"

namespace opbridge::ort {

Status MultiLevelRotatedRoiAlignOp::Create(const Attrs& attrs, std::unique_ptr<MultiLevelRotatedRoiAlignOp>* op) {
  MultiLevelRotatedRoiAlignParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMultiLevelRotatedRoiAlignParams(attrs.output_height, attrs.output_width, attrs.clockwise,
                                                               attrs.sampling_ratio, attrs.featmap_strides,
                                                               attrs.roi_scale_factor, attrs.finest_scale,
                                                               attrs.aligned, &p));
  *op = std::make_unique<MultiLevelRotatedRoiAlignOp>(p);
  return Status::Ok();
}

Status MultiLevelRotatedRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(PrepareMultiLevel(
      api, ctx, params_.roi_align.output_height, params_.roi_align.output_width,
      [this](const Shape& rois, const std::vector<Shape>& features) { return CheckShapes(rois, features); }, &t));
  return RunMultiLevelKernel<float>(api, ctx, t, 6,  // float32 only (the manifest's dtypes)
                                    [&](const cpu::FeatureLevel<float>* levels, const float* rois, float* output,
                                        ScratchAllocator& scratch, const TaskRunner& runner) {
                                      return cpu::MultiLevelRotatedRoiAlign(params_, levels, t.batch, t.channels,
                                                                            rois, t.num_rois, output, scratch, runner);
                                    });
}

Status MultiLevelRotatedRoiAlignOp::InferShape(const ShapeInference& infer) {
  // The same attribute names and defaults as the axis-aligned op: the same output shape rule.
  return MultiLevelRoiAlignOp::InferShape(infer);
}

}  // namespace opbridge::ort
