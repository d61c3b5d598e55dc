// Multi-level RoIAlign ORT glue: opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign.
#include "ort/ops/multi_level_roi_align.h"

#include <vector>

#include "kernels/cpu/multi_level_roi_align.h"

namespace opbridge::ort {
namespace {

// An inferred pooled side: the attribute's value, the plugin's 7 when it is absent, unknown (-1) when
// it is below 1 (the kernel refuses it when the session is created, with the op's error; a negative
// dim here would make ORT fail the node's type inference with a message naming neither).
int64_t PooledDim(bool present, int64_t value) { return !present ? 7 : value >= 1 ? value : -1; }

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
  // Of the maps' dtype (the schema's one dtype for the RoIs and the maps); the per-call limit.
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, &output, t->maps[0].type));
  t->output = NumElements(out_shape) == 0 ? nullptr : output;
  return Status::Ok();
}

Status MultiLevelRoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  return ComputeMultiLevel(
      api, ctx, params_.roi_align,
      [this](const Shape& rois, const std::vector<Shape>& features) {
        return CheckMultiLevelRoiAlignShapes(params_, rois, features);
      },
      [this](const MultiLevelTensors& t, const auto* levels, const auto* rois, auto* output, ScratchAllocator& scratch,
             const TaskRunner& runner) {
        return cpu::MultiLevelRoiAlign(params_, levels, t.batch, t.channels, rois, t.num_rois, output, scratch, runner);
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
              PooledDim(has_h, out_h), PooledDim(has_w, out_w)};
  out.symbols = {rois.dims.size() == 2 ? rois.symbols[0] : "", first.dims.size() == 4 ? first.symbols[1] : "", "", ""};
  // Of the maps' dtype (ORT sets it from the inputs where that is unknown).
  if (first.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, first.type, out);
}

}  // namespace opbridge::ort
