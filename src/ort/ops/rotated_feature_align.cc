// Rotated feature align ORT glue: opbridge::RotatedFeatureAlign and mmcv::MMCVRotatedFeatureAlign.
#include "ort/ops/rotated_feature_align.h"

#include "kernels/cpu/rotated_feature_align.h"

namespace opbridge::ort {

Status RotatedFeatureAlignOp::Create(const Attrs& attrs, std::unique_ptr<RotatedFeatureAlignOp>* op) {
  RotatedFeatureAlignParams p;
  p.spatial_scale = attrs.spatial_scale;
  p.points = attrs.points;
  OPBRIDGE_RETURN_IF_ERROR(CheckRotatedFeatureAlignParams(p));
  *op = std::make_unique<RotatedFeatureAlignOp>(p);
  return Status::Ok();
}

Status RotatedFeatureAlignOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* features,
                                      InputTensor* boxes, void** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, features));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, boxes));
  OPBRIDGE_RETURN_IF_ERROR(CheckRotatedFeatureAlignShapes(features->shape, boxes->shape));
  const Shape out_shape = RotatedFeatureAlignOutputShape(features->shape);
  // The per-call limit; of the features' dtype.
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, output, features->type));
  return Status::Ok();
}

Status RotatedFeatureAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor features, boxes;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &features, &boxes, &output));
  return ForFloatStorage(features.type, [&](auto type) {
    using T = decltype(type);
    return cpu::RotatedFeatureAlign(params_, features.Data<T>(), features.shape[0], features.shape[1],
                                    features.shape[2], features.shape[3], boxes.Data<T>(), static_cast<T*>(output),
                                    OrtTaskRunner(api, ctx));
  });
}

Status RotatedFeatureAlignOp::InferShape(const ShapeInference& infer) {
  InferredShape features;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &features));
  InferredShape out;
  if (features.dims.size() == 4) {
    out = features;
  } else {
    out.dims = {-1, -1, -1, -1};
    out.symbols = {"", "", "", ""};
  }
  // Of the features' dtype (ORT sets it from the inputs where that is unknown).
  if (features.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, features.type, out);
}

}  // namespace opbridge::ort
