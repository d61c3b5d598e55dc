// RoIAlignRotated ORT glue: opbridge::RoiAlignRotated, mmcv::MMCVRoIAlignRotated and
// mmdeploy::MMCVRoIAlignRotated (the same op; mmcv's and mmdeploy's exporters write every attribute).
#include "ort/ops/roi_align_rotated.h"

#include "core/roi_align.h"
#include "ort/ops/roi_align.h"
#include "kernels/cpu/roi_align_rotated.h"

namespace opbridge::ort {
namespace {

Status ReadFlag(const AttrReader& attrs, const char* name, bool* value) {
  int64_t v = 0;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int(name, &v));
  if (v != 0 && v != 1) return Status::Error(name, " must be 0 or 1, got ", v);
  *value = v == 1;
  return Status::Ok();
}

}  // namespace

const OpSchema& RoiAlignRotatedOp::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false},
       {"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {RequiredIntAttr("output_height"), RequiredIntAttr("output_width"), FloatAttr("spatial_scale", 1.0f),
       IntAttr("sampling_ratio", 0), IntAttr("aligned", 1), IntAttr("clockwise", 0)}};
  return schema;
}

Status RoiAlignRotatedOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                                 std::unique_ptr<RoiAlignRotatedOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  RoiAlignRotatedParams p;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_height", &p.output_height));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("output_width", &p.output_width));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Float("spatial_scale", &p.spatial_scale));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("sampling_ratio", &p.sampling_ratio));
  OPBRIDGE_RETURN_IF_ERROR(ReadFlag(attrs, "aligned", &p.aligned));
  OPBRIDGE_RETURN_IF_ERROR(ReadFlag(attrs, "clockwise", &p.clockwise));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRotatedParams(p));
  *op = std::make_unique<RoiAlignRotatedOp>(p);
  return Status::Ok();
}

Status RoiAlignRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, rois;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &rois));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRotatedShapes(input.shape, rois.shape));
  const int64_t batch = input.shape[0];
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(rois.Data<float>(), rois.shape[0], batch, 6));
  const Shape out_shape = RoiAlignRotatedOutputShape(params_, input.shape, rois.shape);
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  if (NumElements(out_shape) == 0) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::RoiAlignRotated(params_, input.Data<float>(), batch, input.shape[1], input.shape[2],
                              input.shape[3], rois.Data<float>(), rois.shape[0], static_cast<float*>(output), scratch,
                              OrtTaskRunner(api, ctx));
}

Status RoiAlignRotatedOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 0, 1);
}

}  // namespace opbridge::ort
