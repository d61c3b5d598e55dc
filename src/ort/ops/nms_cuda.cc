// Axis-aligned NMS ORT glue, CUDA twins: opbridge::Nms, opbridge::BatchedNms, mmcv::NonMaxSuppression
// and opbridge::MulticlassNms on the CUDA execution provider, with the CPU ops' checks. The kernels
// keep the CPU kernels' boxes in their order (kernels/cuda/nms.h); the output is allocated once the
// kernel has copied its row count to the host.
#include "kernels/cuda/nms.h"
#include "ort/cuda_glue.h"
#include "ort/ops/nms.h"

namespace opbridge::ort {

std::function<Status(int64_t rows, int64_t** output)> OutputRowsOnce(const OrtApi& api, OrtKernelContext* ctx,
                                                                     int64_t columns) {
  return [&api, ctx, columns](int64_t rows, int64_t** output) {
    void* out = nullptr;
    const Shape shape = columns == 0 ? Shape{rows} : Shape{rows, columns};
    OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, shape, &out));
    *output = static_cast<int64_t*>(out);
    return Status::Ok();
  };
}

Status NmsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const { return RunCuda(api, ctx, false); }

Status BatchedNmsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const { return RunCuda(api, ctx, true); }

Status NmsOp::RunCuda(const OrtApi& api, OrtKernelContext* ctx, bool with_categories) const {
  InputTensor boxes, scores, idxs;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, with_categories, &boxes, &scores, &idxs));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::Nms(params_, boxes.Data<T>(), scores.Data<T>(), with_categories ? idxs.Data<int64_t>() : nullptr,
                     boxes.shape[0], OutputRowsOnce(api, ctx, 0), cuda.scratch(), cuda.stream());
  });
}

Status MulticlassNmsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cuda::MulticlassNms(params_, boxes.Data<T>(), scores.Data<T>(), boxes.shape[0], scores.shape[1],
                               boxes.shape[1], OutputRowsOnce(api, ctx, 3), cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
