// Soft-NMS ORT glue, CUDA twin: opbridge::SoftNonMaxSuppression and mmcv::SoftNonMaxSuppression on the
// CUDA execution provider, with the CPU op's checks. The outputs are allocated once the kernel has
// copied the kept count to the host.
#include "kernels/cuda/soft_nms.h"
#include "ort/cuda_glue.h"
#include "ort/ops/soft_nms.h"

namespace opbridge::ort {

Status SoftNmsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  const auto allocate = [&api, ctx](int64_t kept, float** dets, int64_t** inds) {
    void* dets_out = nullptr;
    void* inds_out = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {kept, 5}, &dets_out));
    OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, {kept}, &inds_out));
    *dets = static_cast<float*>(dets_out);
    *inds = static_cast<int64_t*>(inds_out);
    return Status::Ok();
  };
  return cuda::SoftNms(params_, boxes.Data<float>(), scores.Data<float>(), boxes.shape[0], allocate, cuda.scratch(),
                       cuda.stream());
}

}  // namespace opbridge::ort
