// RoIAlign ORT glue, CUDA twin: mmcv::MMCVRoiAlign and opbridge::RoiAlign on the CUDA execution
// provider. The same checks as the CPU op's Compute, except those of the RoIs' values, which are
// in device memory: the kernel gives NaN rows there instead (kernels/cuda/roi_align.h).
#include "kernels/cuda/roi_align.h"
#include "ort/cuda_glue.h"
#include "ort/ops/roi_align.h"

namespace opbridge::ort {

Status RoiAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, rois;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &rois, &output));
  if (output == nullptr) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    return cuda::RoiAlign(params_, input.Data<T>(), input.shape[0], input.shape[1], input.shape[2], input.shape[3],
                          rois.Data<T>(), rois.shape[0], static_cast<T*>(output), cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
