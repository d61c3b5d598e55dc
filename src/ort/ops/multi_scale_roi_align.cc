// Multi-scale RoIAlign ORT glue: opbridge::MultiScaleRoiAlign.
#include "ort/ops/multi_scale_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_scale_roi_align.h"
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
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  InputTensor rois;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &rois));
  std::vector<InputTensor> maps(count > 0 ? count - 1 : 0);
  std::vector<Shape> shapes;
  for (size_t l = 0; l < maps.size(); ++l) {
    OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, l + 1, &maps[l]));
    shapes.push_back(maps[l].shape);
  }
  OPBRIDGE_RETURN_IF_ERROR(CheckMultiScaleRoiAlignShapes(params_, rois.shape, shapes));
  const int64_t batch = shapes[0][0], channels = shapes[0][1], num_rois = rois.shape[0];
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(rois.Data<float>(), num_rois, batch));
  void* output = nullptr;
  const Shape out_shape = {num_rois, channels, params_.roi_align.output_height, params_.roi_align.output_width};
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  if (NumElements(out_shape) == 0) return Status::Ok();
  std::vector<cpu::FeatureLevel> levels;
  for (const InputTensor& m : maps) levels.push_back({m.Data<float>(), m.shape[2], m.shape[3]});
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::MultiScaleRoiAlign(params_, levels.data(), batch, channels, rois.Data<float>(), num_rois,
                                 static_cast<float*>(output), scratch, OrtTaskRunner(api, ctx));
}

Status MultiScaleRoiAlignOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 1, 0);
}

}  // namespace opbridge::ort
