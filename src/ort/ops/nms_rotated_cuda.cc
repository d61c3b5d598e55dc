// Rotated NMS ORT glue, CUDA twins: opbridge::NmsRotated, opbridge::MulticlassNmsRotated and
// mmdeploy::NMSRotated on the CUDA execution provider, with the CPU ops' checks. The kernels keep
// the CPU kernels' boxes in their order (kernels/cuda/nms.h: the axis-aligned pipeline with the
// rotated rules); the output is allocated once the kernel has copied its row count to the host.
#include "kernels/cuda/nms.h"
#include "ort/cuda_glue.h"
#include "ort/ops/nms.h"
#include "ort/ops/nms_rotated.h"

namespace opbridge::ort {

Status NmsRotatedOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores, idxs;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &idxs));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::NmsRotated(params_, boxes.Data<T>(), scores.Data<T>(), idxs.present ? idxs.Data<int64_t>() : nullptr,
                            boxes.shape[0], OutputRowsOnce(api, ctx, 0), cuda.scratch(), cuda.stream());
  });
}

Status MulticlassNmsRotatedOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::MulticlassNmsRotated(params_, boxes.Data<T>(), scores.Data<T>(), boxes.shape[0], scores.shape[1],
                                      boxes.shape[1], OutputRowsOnce(api, ctx, 3), cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
