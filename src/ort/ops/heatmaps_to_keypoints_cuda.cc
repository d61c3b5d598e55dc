// Heatmap decoding ORT glue, CUDA twin: opbridge::HeatmapsToKeypoints on the CUDA execution
// provider, with the CPU op's shape checks; the rois are in device memory, so an oversized roi
// gives NaN (kernels/cuda/heatmaps_to_keypoints.h) where the CPU op reports an error.
#include "kernels/cuda/heatmaps_to_keypoints.h"
#include "ort/cuda_glue.h"
#include "ort/ops/heatmaps_to_keypoints.h"

namespace opbridge::ort {

Status HeatmapsToKeypointsOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor maps, rois;
  float *xy = nullptr, *scores = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &maps, &rois, &xy, &scores));
  if (xy == nullptr) return Status::Ok();
  CudaContext cuda;
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api, ctx, &cuda));
  return cuda::HeatmapsToKeypoints(maps.Data<float>(), maps.shape[0], maps.shape[1], maps.shape[2], maps.shape[3],
                                   rois.Data<float>(), xy, scores, cuda.stream);
}

}  // namespace opbridge::ort
