// Multi-level RoIAlign ORT glue: opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign.
#include "ort/ops/multi_level_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_level_roi_align.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}  // namespace

Status MultiLevelRoiAlignOp::Create(const Attrs& attrs, std::unique_ptr<MultiLevelRoiAlignOp>* op) {
  MultiLevelRoiAlignParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMultiLevelRoiAlignParams(attrs.output_height, attrs.output_width, attrs.pool_mode,
                                                        attrs.sampling_ratio, attrs.featmap_strides,
                                                        attrs.roi_scale_factor, attrs.finest_scale, attrs.aligned, &p));
  *op = std::make_unique<MultiLevelRoiAlignOp>(p);
  return Status::Ok();
}

Status PrepareMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t output_height, int64_t output_width,
                         const LevelShapeCheck& check_shapes, MultiLevelTensors* t) {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &t->rois));
  t->maps.assign(count > 0 ? count - 1 : 0, InputTensor());
  std::vector<Shape> shapes(t->maps.size());
  for (size_t l = 0; l < t->maps.size(); ++l) {
    OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, l + 1, &t->maps[l]));
    shapes[l] = t->maps[l].shape;
  }
  OPBRIDGE_RETURN_IF_ERROR(check_shapes(t->rois.shape, shapes));
  t->batch = shapes[0][0];
  t->channels = shapes[0][1];
  t->num_rois = t->rois.shape[0];
  const Shape out_shape = {t->num_rois, t->channels, output_height, output_width};
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, &output));  // the per-call limit
  t->output = NumElements(out_shape) == 0 ? nullptr : static_cast<float*>(output);
  return Status::Ok();
}

Status ComputeMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t roi_width, int64_t output_height,
                         int64_t output_width, const LevelShapeCheck& check_shapes, const LevelKernel& kernel) {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(PrepareMultiLevel(api, ctx, output_height, output_width, check_shapes, &t));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(t.rois.Data<float>(), t.num_rois, t.batch, roi_width));
  if (t.output == nullptr) return Status::Ok();
  std::vector<cpu::FeatureLevel> levels(t.maps.size());
  for (size_t l = 0; l < t.maps.size(); ++l) levels[l] = {t.maps[l].Data<float>(), t.maps[l].shape[2], t.maps[l].shape[3]};
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return kernel(levels.data(), t.batch, t.channels, t.rois.Data<float>(), t.num_rois, t.output, scratch,
                OrtTaskRunner(api, ctx));
}

Status MultiLevelRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  return ComputeMultiLevel(
      api, ctx, 5, params_.roi_align.output_height, params_.roi_align.output_width,
      [this](const Shape& rois, const std::vector<Shape>& features) {
        return CheckMultiLevelRoiAlignShapes(params_, rois, features);
      },
      [this](const cpu::FeatureLevel* levels, int64_t batch, int64_t channels, const float* rois, int64_t num_rois,
             float* output, ScratchAllocator& scratch, const TaskRunner& runner) {
        return cpu::MultiLevelRoiAlign(params_, levels, batch, channels, rois, num_rois, output, scratch, runner);
      });
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
