// Bicubic interpolation ORT glue: opbridge::BicubicInterpolate and mmdeploy::TRTBicubicInterpolate.
#include "ort/ops/bicubic_interpolate.h"

#include <cmath>

#include "kernels/cpu/bicubic_interpolate.h"

namespace opbridge::ort {

Status BicubicInterpolateOp::Create(const Attrs& attrs, std::unique_ptr<BicubicInterpolateOp>* op) {
  BicubicInterpolateParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeBicubicInterpolateParams(attrs.scale_factor, attrs.align_corners, &p));
  *op = std::make_unique<BicubicInterpolateOp>(p);
  return Status::Ok();
}

Status BicubicInterpolateOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input,
                                     Shape* output_shape, float** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(BicubicInterpolateOutputShape(input->shape, params_, output_shape));
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, *output_shape, &data));
  *output = NumElements(*output_shape) == 0 ? nullptr : static_cast<float*>(data);
  return Status::Ok();
}

Status BicubicInterpolateOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  Shape output_shape;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &output_shape, &output));
  if (output == nullptr) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::BicubicInterpolate(input.Data<float>(), input.shape, params_, output_shape, output, scratch,
                                 OrtTaskRunner(api, ctx));
}

Status BicubicInterpolateOp::InferShape(const ShapeInference& infer) {
  InferredShape input;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  if (input.dims.size() != 4) return Status::Ok();  // unknown rank (or an error at run time)
  InferredShape output = input;
  output.type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  // The spatial sizes are known when the input's are; the scale comes from the node's attribute,
  // which the shape-inference context does not give as floats: left to run time.
  for (size_t d = 2; d < 4; ++d) {
    output.dims[d] = -1;
    output.symbols[d] = "";
  }
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, output);
}

}  // namespace opbridge::ort
