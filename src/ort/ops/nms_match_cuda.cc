// NMSMatch ORT glue, CUDA twin: opbridge::NmsMatch and mmdeploy::NMSMatch on the CUDA execution
// provider, with the CPU op's checks (the thresholds are read on the host: the manifest's
// cuda_host_inputs). The output is allocated once the kernel has copied its row count to the host.
#include "kernels/cuda/nms.h"
#include "ort/cuda_glue.h"
#include "ort/ops/nms.h"
#include "ort/ops/nms_match.h"

namespace opbridge::ort {

Status NmsMatchOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  NmsMatchParams params;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &params));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::NmsMatch(params, boxes.Data<T>(), scores.Data<T>(), boxes.shape[0], scores.shape[1], boxes.shape[1],
                          OutputRowsOnce(api, ctx, 4), cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
