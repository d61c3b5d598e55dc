// Bicubic interpolation ORT glue, CUDA twin: opbridge::BicubicInterpolate and
// mmdeploy::TRTBicubicInterpolate on the CUDA execution provider, with the CPU op's checks (all of
// shapes and attributes, known on the host).
#include "kernels/cuda/bicubic_interpolate.h"
#include "ort/cuda_glue.h"
#include "ort/ops/bicubic_interpolate.h"

namespace opbridge::ort {

Status BicubicInterpolateOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  Shape output_shape;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &output_shape, &output));
  if (output == nullptr) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::BicubicInterpolate(input.Data<float>(), input.shape, params_, output_shape, output, cuda.stream);
}

}  // namespace opbridge::ort
