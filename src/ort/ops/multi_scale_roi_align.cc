// Multi-scale RoIAlign ORT glue: opbridge::MultiScaleRoiAlign.
#include "ort/ops/multi_scale_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_scale_roi_align.h"
#include "ort/ops/multi_level_roi_align.h"  // ComputeMultiLevel
#include "ort/ops/roi_align.h"

namespace opbridge::ort {
Status MultiScaleRoiAlignOp::Create(const Attrs& attrs, std::unique_ptr<MultiScaleRoiAlignOp>* op) {
  MultiScaleRoiAlignParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMultiScaleRoiAlignParams(attrs.output_height, attrs.output_width, attrs.sampling_ratio,
                                                        attrs.aligned, attrs.spatial_scales, attrs.canonical_scale,
                                                        attrs.canonical_level, &p));
  *op = std::make_unique<MultiScaleRoiAlignOp>(p);
  return Status::Ok();
}

Status MultiScaleRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  return ComputeMultiLevel(
      api, ctx, params_.roi_align,
      [this](const Shape& rois, const std::vector<Shape>& features) {
        return CheckMultiScaleRoiAlignShapes(params_, rois, features);
      },
      [this](const MultiLevelTensors& t, const auto* levels, const auto* rois, auto* output, ScratchAllocator& scratch,
             const TaskRunner& runner) {
        return cpu::MultiScaleRoiAlign(params_, levels, t.batch, t.channels, rois, t.num_rois, output, scratch, runner);
      });
}

Status MultiScaleRoiAlignOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 1, 0, /*typed_as_features=*/true);
}

}  // namespace opbridge::ort
