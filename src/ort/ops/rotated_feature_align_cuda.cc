// Rotated feature align ORT glue, CUDA twin: opbridge::RotatedFeatureAlign and
// mmcv::MMCVRotatedFeatureAlign on the CUDA execution provider, with the CPU op's checks (all of
// shapes and attributes, known on the host).
#include "kernels/cuda/rotated_feature_align.h"
#include "ort/cuda_glue.h"
#include "ort/ops/rotated_feature_align.h"

namespace opbridge::ort {

Status RotatedFeatureAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor features, boxes;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &features, &boxes, &output));
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return ForFloatStorage(features.type, [&](auto type) {
    using T = decltype(type);
    return cuda::RotatedFeatureAlign(params_, features.Data<T>(), features.shape[0], features.shape[1],
                                     features.shape[2], features.shape[3], boxes.Data<T>(), static_cast<T*>(output),
                                     cuda.stream);
  });
}

}  // namespace opbridge::ort
