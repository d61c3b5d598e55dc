// TensorRT batched NMS ORT glue, CUDA twin: opbridge::TrtBatchedNms, opbridge::TrtBatchedRotatedNms,
// mmdeploy::TRTBatchedNMS and mmdeploy::TRTBatchedRotatedNMS on the CUDA execution provider, with the
// CPU op's checks and outputs. The outputs have a fixed size: nothing synchronizes the stream.
#include "kernels/cuda/nms.h"
#include "ort/cuda_glue.h"
#include "ort/ops/trt_batched_nms.h"

namespace opbridge::ort {

Status TrtBatchedNmsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  Outputs out;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &out));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::TrtBatchedNms(params_, boxes.Data<T>(), boxes.shape[2], scores.Data<T>(), boxes.shape[0],
                               boxes.shape[1], scores.shape[2], static_cast<T*>(out.dets), out.labels, out.index,
                               cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
