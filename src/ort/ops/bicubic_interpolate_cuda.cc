// Bicubic interpolation ORT glue, CUDA twin: opbridge::BicubicInterpolate and
// mmdeploy::TRTBicubicInterpolate on the CUDA execution provider, with the CPU op's checks (all of
// shapes and attributes, known on the host).
#include "kernels/cuda/bicubic_interpolate.h"
#include "ort/cuda_glue.h"
#include "ort/ops/bicubic_interpolate.h"

namespace opbridge::ort {

Status BicubicInterpolateOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &input));
  Shape output_shape;
  OPBRIDGE_RETURN_IF_ERROR(BicubicInterpolateOutputShape(input.shape, params_, &output_shape));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, output_shape, &output));
  if (NumElements(output_shape) == 0) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::BicubicInterpolate(input.Data<float>(), input.shape, params_, output_shape,
                                  static_cast<float*>(output), cuda.stream);
}

}  // namespace opbridge::ort
