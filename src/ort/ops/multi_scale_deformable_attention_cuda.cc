// Multi-scale deformable attention ORT glue, CUDA twin: opbridge::MultiScaleDeformableAttention and
// mmdeploy::MMCVMultiScaleDeformableAttention on the CUDA execution provider, with the CPU op's
// checks: spatial_shapes and level_start_index are read on the host (ORT puts them there, the
// manifest's cuda_host_inputs), the rest stays in device memory.
#include "kernels/cuda/multi_scale_deformable_attention.h"
#include "ort/cuda_glue.h"
#include "ort/ops/multi_scale_deformable_attention.h"

namespace opbridge::ort {

Status MultiScaleDeformableAttentionOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  if (call.output == nullptr) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::MultiScaleDeformableAttention(call.dims, call.value.Data<float>(), call.shapes.data(),
                                             call.starts.data(), call.locations.Data<float>(),
                                             call.weights.Data<float>(), call.output, cuda.stream);
}

}  // namespace opbridge::ort
