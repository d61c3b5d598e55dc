// RoIAlign ORT glue: mmcv::MMCVRoiAlign and opbridge::RoiAlign.
#include "ort/ops/roi_align.h"

#include "kernels/cpu/roi_align.h"

namespace opbridge::ort {

Status InferRoiPoolingShape(const ShapeInference& infer, size_t features_input, size_t rois_input,
                            bool typed_as_features) {
  InferredShape features, rois;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(features_input, &features));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(rois_input, &rois));
  int64_t out_h = -1, out_w = -1;
  bool has_h = false, has_w = false;
  OPBRIDGE_RETURN_IF_ERROR(infer.AttrInt("output_height", &out_h, &has_h));
  OPBRIDGE_RETURN_IF_ERROR(infer.AttrInt("output_width", &out_w, &has_w));
  InferredShape out;
  // A side below 1 is left unknown: the kernel refuses it when the session is created, with the op's
  // error (a negative dim here would make ORT fail the node's type inference, naming neither).
  out.dims = {rois.dims.size() == 2 ? rois.dims[0] : -1, features.dims.size() == 4 ? features.dims[1] : -1,
              has_h && out_h >= 1 ? out_h : -1, has_w && out_w >= 1 ? out_w : -1};
  out.symbols = {rois.symbols.size() == 2 ? rois.symbols[0] : "",
                 features.symbols.size() == 4 ? features.symbols[1] : "", "", ""};
  if (!typed_as_features) return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out);
  // Of the type parameter T: the features' dtype (ORT sets it from the inputs where that is unknown).
  if (features.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, features.type, out);
}

Status RoiAlignOp::Create(const Attrs& attrs, std::unique_ptr<RoiAlignOp>* op) {
  RoiAlignParams p;
  p.output_height = attrs.output_height;
  p.output_width = attrs.output_width;
  p.spatial_scale = attrs.spatial_scale;
  p.sampling_ratio = attrs.sampling_ratio;
  p.mode = attrs.mode;
  p.aligned = attrs.aligned == 1;
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignParams(p));
  *op = std::make_unique<RoiAlignOp>(p);
  return Status::Ok();
}

Status RoiAlignOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* rois,
                           void** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, rois));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignShapes(input->shape, rois->shape));
  const Shape out_shape = RoiAlignOutputShape(params_, input->shape, rois->shape);
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, &data, input->type));  // the per-call limit
  *output = NumElements(out_shape) == 0 ? nullptr : data;
  return Status::Ok();
}

Status RoiAlignOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, rois;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &rois, &output));
  const int64_t batch = input.shape[0];
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(rois.Data<T>(), rois.shape[0], batch));
    if (output == nullptr) return Status::Ok();
    return cpu::RoiAlign(params_, input.Data<T>(), batch, input.shape[1], input.shape[2], input.shape[3],
                         rois.Data<T>(), rois.shape[0], static_cast<T*>(output), OrtTaskRunner(api, ctx));
  });
}

Status RoiAlignOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 0, 1, /*typed_as_features=*/true);
}

}  // namespace opbridge::ort
