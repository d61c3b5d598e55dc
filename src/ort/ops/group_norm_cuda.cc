// Group normalization ORT glue, CUDA twins: opbridge::GroupNorm and the ONNX tutorial's
// identities on the CUDA execution provider, with the CPU ops' checks (the tutorial's num_groups
// input is taken on the host). The kernel gives the CPU kernel's bits.
#include "kernels/cuda/group_norm.h"
#include "ort/cuda_glue.h"
#include "ort/ops/group_norm.h"

namespace opbridge::ort {

Status RunGroupNormCuda(const OrtApi& api, OrtKernelContext* ctx, const InputTensor& input, int64_t num_groups,
                        const InputTensor& scale, const InputTensor& bias, float epsilon) {
  void* output = nullptr;
  bool has_values = false;
  OPBRIDGE_RETURN_IF_ERROR(AllocateNormOutput(api, ctx, input, &output, &has_values));
  if (!has_values) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    return cuda::GroupNorm(input.Data<T>(), NormLayoutOf(input.shape), num_groups,
                           scale.present ? scale.Data<T>() : nullptr, bias.present ? bias.Data<T>() : nullptr, epsilon,
                           static_cast<T*>(output), cuda.scratch(), cuda.stream());
  });
}

Status GroupNormOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &scale, &bias));
  return RunGroupNormCuda(api, ctx, input, params_.num_groups, scale, bias, params_.epsilon);
}

Status TutorialGroupNormOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  int64_t num_groups = 0;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &num_groups, &scale, &bias));
  return RunGroupNormCuda(api, ctx, input, num_groups, scale, bias, epsilon_);
}

}  // namespace opbridge::ort
