// Instance normalization ORT glue, CUDA twins: opbridge::InstanceNorm, mmcv::MMCVInstanceNormalization
// (in both domains) and mmdeploy::TRTInstanceNormalization on the CUDA execution provider: the group
// normalization kernel with G = C, as on the CPU.
#include "ort/cuda_glue.h"
#include "ort/ops/group_norm.h"
#include "ort/ops/instance_norm.h"

namespace opbridge::ort {

Status InstanceNormOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, scale, bias;
  OPBRIDGE_RETURN_IF_ERROR(Inputs(api, ctx, &input, &scale, &bias));
  return RunGroupNormCuda(api, ctx, input, input.shape[1], scale, bias, params_.epsilon);
}

}  // namespace opbridge::ort
