// RoIAlign ORT glue, CUDA twin: mmcv::MMCVRoiAlign and opbridge::RoiAlign on the CUDA execution
// provider. The same checks as the CPU op's Compute, except those of the RoIs' values, which are
// in device memory: the kernel gives NaN rows there instead (kernels/cuda/roi_align.h).
#include "kernels/cuda/roi_align.h"
#include "ort/cuda_glue.h"
#include "ort/ops/roi_align.h"

namespace opbridge::ort {

Status RoiAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, rois;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &rois));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignShapes(input.shape, rois.shape));
  const Shape out_shape = RoiAlignOutputShape(params_, input.shape, rois.shape);
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &output));
  if (NumElements(out_shape) == 0) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::RoiAlign(params_, input.Data<float>(), input.shape[0], input.shape[1], input.shape[2], input.shape[3],
                        rois.Data<float>(), rois.shape[0], static_cast<float*>(output), cuda.stream);
}

}  // namespace opbridge::ort
