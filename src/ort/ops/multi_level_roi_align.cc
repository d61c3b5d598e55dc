// Multi-level RoIAlign ORT glue: opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign.
#include "ort/ops/multi_level_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_level_roi_align.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}  // namespace

const OpSchema& MultiLevelRoiAlignOp::Schema() {
  // Attribute names and defaults are the TensorRT plugin's (its creator reads every one as optional
  // except featmap_strides).
  static const OpSchema schema{
      {{"rois", kFloat, false}, {"features", kFloat, false, true}},
      {{"output", kFloat, false}},
      {IntAttr("output_height", 7), IntAttr("output_width", 7), IntAttr("pool_mode", 0), IntAttr("sampling_ratio", 2),
       RequiredFloatsAttr("featmap_strides"), FloatAttr("roi_scale_factor", -1.0f), IntAttr("finest_scale", 56),
       IntAttr("aligned", 0)}};
  return schema;
}

Status MultiLevelRoiAlignOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                                    std::unique_ptr<MultiLevelRoiAlignOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  int64_t out_h = 0, out_w = 0, pool_mode = 0, sampling_ratio = 0, finest_scale = 0, aligned = 0;
  float roi_scale_factor = 0.0f;
  std::vector<float> strides;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_height", &out_h));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_width", &out_w));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("pool_mode", &pool_mode));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("sampling_ratio", &sampling_ratio));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Floats("featmap_strides", &strides));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Float("roi_scale_factor", &roi_scale_factor));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("finest_scale", &finest_scale));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("aligned", &aligned));
  MultiLevelRoiAlignParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMultiLevelRoiAlignParams(out_h, out_w, pool_mode, sampling_ratio, strides,
                                                        roi_scale_factor, finest_scale, aligned, &p));
  *op = std::make_unique<MultiLevelRoiAlignOp>(p);
  return Status::Ok();
}

Status MultiLevelRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  InputTensor rois;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &rois));
  std::vector<InputTensor> maps(count > 0 ? count - 1 : 0);
  std::vector<Shape> shapes(maps.size());
  for (size_t l = 0; l < maps.size(); ++l) {
    OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, l + 1, &maps[l]));
    shapes[l] = maps[l].shape;
  }
  OPBRIDGE_RETURN_IF_ERROR(CheckMultiLevelRoiAlignShapes(params_, rois.shape, shapes));
  const int64_t batch = shapes[0][0], channels = shapes[0][1], num_rois = rois.shape[0];
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(rois.Data<float>(), num_rois, batch));
  const Shape out_shape = {num_rois, channels, params_.roi_align.output_height, params_.roi_align.output_width};
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  if (NumElements(out_shape) == 0) return Status::Ok();
  std::vector<cpu::FeatureLevel> levels(maps.size());
  for (size_t l = 0; l < maps.size(); ++l) levels[l] = {maps[l].Data<float>(), shapes[l][2], shapes[l][3]};
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::MultiLevelRoiAlign(params_, levels.data(), batch, channels, rois.Data<float>(), num_rois,
                                 static_cast<float*>(output), scratch, OrtTaskRunner(api, ctx));
}

Status MultiLevelRoiAlignOp::InferShape(const ShapeInference& infer) {
  InferredShape rois, first;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &rois));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &first));
  int64_t out_h = 0, out_w = 0;
  bool has_h = false, has_w = false;
  OPBRIDGE_RETURN_IF_ERROR(infer.AttrInt("output_height", &out_h, &has_h));
  OPBRIDGE_RETURN_IF_ERROR(infer.AttrInt("output_width", &out_w, &has_w));
  InferredShape out;
  out.dims = {rois.dims.size() == 2 ? rois.dims[0] : -1, first.dims.size() == 4 ? first.dims[1] : -1,
              has_h ? out_h : 7, has_w ? out_w : 7};  // absent: the plugin's default
  out.symbols = {rois.dims.size() == 2 ? rois.symbols[0] : "", first.dims.size() == 4 ? first.symbols[1] : "", "", ""};
  return infer.SetOutput(0, kFloat, out);
}

}  // namespace opbridge::ort
