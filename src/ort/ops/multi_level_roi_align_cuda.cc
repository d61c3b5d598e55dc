// Multi-level RoIAlign ORT glue, CUDA twin: opbridge::MultiLevelRoiAlign and
// mmdeploy::MMCVMultiLevelRoiAlign on the CUDA execution provider, and the launches the CUDA twin of
// opbridge::MultiScaleRoiAlign shares (multi_scale_roi_align_cuda.cc). The same checks as the CPU
// ops' Compute, except those of the RoIs' values, which are in device memory: the kernel gives NaN
// rows there instead (kernels/cuda/multi_level_roi_align.h).
#include <vector>

#include "kernels/cuda/multi_level_roi_align.h"
#include "ort/cuda_glue.h"
#include "ort/ops/multi_level_roi_align.h"

namespace opbridge::ort {

template <class T>
shared::FeatureMaps<T> FeatureMapsOf(const MultiLevelTensors& t, int64_t first, const std::vector<float>& spatial_scales) {
  std::vector<const T*> data;
  std::vector<int64_t> heights, widths;
  for (const InputTensor& map : t.maps) {
    data.push_back(map.Data<T>());
    heights.push_back(map.shape[2]);
    widths.push_back(map.shape[3]);
  }
  return shared::FeatureMapsFrom(first, static_cast<int64_t>(t.maps.size()), data.data(), heights.data(),
                                 widths.data(), spatial_scales.data());
}
template shared::FeatureMaps<float> FeatureMapsOf<float>(const MultiLevelTensors&, int64_t, const std::vector<float>&);

Status RunLeveledRoiAlignCuda(const OrtApi& api, OrtKernelContext* ctx, const MultiLevelTensors& t,
                              const RoiAlignParams& roi_align, const std::vector<float>& spatial_scales,
                              const shared::RoiLeveling& leveling) {
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  const int64_t total = static_cast<int64_t>(t.maps.size());
  return ForFloatStorage(t.rois.type, [&](auto type) {
    using T = decltype(type);
    std::vector<shared::FeatureMaps<T>> launches;
    for (int64_t first = 0; first < total; first += shared::kMaxFeatureMaps) {
      launches.push_back(FeatureMapsOf<T>(t, first, spatial_scales));
    }
    return cuda::LeveledRoiAlign(roi_align, launches, leveling, t.batch, t.channels, t.rois.Data<T>(), t.num_rois,
                                 static_cast<T*>(t.output), cuda.scratch(), cuda.stream());
  });
}

Status MultiLevelRoiAlignOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(PrepareMultiLevel(api, ctx, params_.roi_align.output_height, params_.roi_align.output_width,
                                             [this](const Shape& rois, const std::vector<Shape>& features) {
                                               return CheckMultiLevelRoiAlignShapes(params_, rois, features);
                                             },
                                             &t));
  if (t.output == nullptr) return Status::Ok();
  shared::RoiLeveling leveling{};
  leveling.kind = shared::RoiLeveling::kMmdet;
  leveling.finest_scale = params_.finest_scale;
  leveling.rescale = params_.rescale;
  leveling.roi_scale_factor = params_.roi_scale_factor;
  return RunLeveledRoiAlignCuda(api, ctx, t, params_.roi_align, params_.spatial_scales, leveling);
}

}  // namespace opbridge::ort
