// Multi-scale RoIAlign ORT glue: opbridge::MultiScaleRoiAlign.
#include "ort/ops/multi_scale_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_scale_roi_align.h"
#include "ort/ops/multi_level_roi_align.h"  // ComputeMultiLevel
#include "ort/ops/roi_align.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}  // namespace

const OpSchema& MultiScaleRoiAlignOp::Schema() {
  static const OpSchema schema{
      {{"rois", kFloat, false}, {"features", kFloat, false, true}},
      {{"output", kFloat, false}},
      {RequiredIntAttr("output_height"), RequiredIntAttr("output_width"), RequiredIntAttr("sampling_ratio"),
       RequiredFloatsAttr("spatial_scales"), IntAttr("canonical_scale", 224), IntAttr("canonical_level", 4),
       IntAttr("aligned", 0)}};
  return schema;
}

Status MultiScaleRoiAlignOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                                    std::unique_ptr<MultiScaleRoiAlignOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  int64_t out_h = 0, out_w = 0, sampling_ratio = 0, canonical_scale = 0, canonical_level = 0, aligned = 0;
  std::vector<float> scales;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_height", &out_h));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_width", &out_w));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("sampling_ratio", &sampling_ratio));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Floats("spatial_scales", &scales));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("canonical_scale", &canonical_scale));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("canonical_level", &canonical_level));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("aligned", &aligned));
  MultiScaleRoiAlignParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMultiScaleRoiAlignParams(out_h, out_w, sampling_ratio, aligned, scales, canonical_scale,
                                                        canonical_level, &p));
  *op = std::make_unique<MultiScaleRoiAlignOp>(p);
  return Status::Ok();
}

Status MultiScaleRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  return ComputeMultiLevel(
      api, ctx, 5, params_.roi_align.output_height, params_.roi_align.output_width,
      [this](const Shape& rois, const std::vector<Shape>& features) {
        return CheckMultiScaleRoiAlignShapes(params_, rois, features);
      },
      [this](const cpu::FeatureLevel* levels, int64_t batch, int64_t channels, const float* rois, int64_t num_rois,
             float* output, ScratchAllocator& scratch, const TaskRunner& runner) {
        return cpu::MultiScaleRoiAlign(params_, levels, batch, channels, rois, num_rois, output, scratch, runner);
      });
}

Status MultiScaleRoiAlignOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 1, 0);
}

}  // namespace opbridge::ort
