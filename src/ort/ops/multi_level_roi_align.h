// Multi-level RoIAlign ORT glue.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/multi_level_roi_align.h"
#include "core/roi_align.h"  // CheckRoiAlignRois
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel
#include "kernels/shared/roi_align_levels.h"
#include "ort/generated/multi_level_roi_align_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// The tensors of a multi-level RoI node (rois [R, roi_width], then the feature maps [N, C, H_l,
// W_l]), as both Computes get them.
struct MultiLevelTensors {
  InputTensor rois;
  std::vector<InputTensor> maps;
  void* output = nullptr;  // [R, C, output_height, output_width] of the maps' dtype; null when it has no elements
  int64_t batch = 0, channels = 0, num_rois = 0;
};
using LevelShapeCheck = std::function<Status(const Shape& rois, const std::vector<Shape>& features)>;
// The inputs, their shapes checked with `check_shapes`, and the output allocated.
Status PrepareMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t output_height, int64_t output_width,
                         const LevelShapeCheck& check_shapes, MultiLevelTensors* tensors);

// The CPU Compute of a prepared multi-level RoI node (MultiScaleRoiAlign and the multi-level RoIAlign
// ops) in storage type T (the dtype of its RoIs and maps, one by the schema's rule): the RoIs' batch
// indices checked (rows of roi_width values), then, unless the output is empty,
// kernel(levels, rois, output, scratch, runner) with levels the maps as cpu::FeatureLevel<T>.
template <class T, class Kernel>
Status RunMultiLevelKernel(const OrtApi& api, OrtKernelContext* ctx, const MultiLevelTensors& t, int64_t roi_width,
                           const Kernel& kernel) {
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(t.rois.Data<T>(), t.num_rois, t.batch, roi_width));
  if (t.output == nullptr) return Status::Ok();
  std::vector<cpu::FeatureLevel<T>> levels(t.maps.size());
  for (size_t l = 0; l < t.maps.size(); ++l) levels[l] = {t.maps[l].Data<T>(), t.maps[l].shape[2], t.maps[l].shape[3]};
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return kernel(levels.data(), t.rois.Data<T>(), static_cast<T*>(t.output), scratch, OrtTaskRunner(api, ctx));
}

// The CPU Compute of a multi-level RoI node of axis-aligned RoIs (rows of 5) whose RoIs and maps are
// float32, float16 or bfloat16 (MultiScaleRoiAlign, MultiLevelRoiAlign): PrepareMultiLevel, then
// RunMultiLevelKernel in the inputs' storage type, calling kernel(tensors, levels, rois, output,
// scratch, runner), a generic lambda.
template <class Kernel>
Status ComputeMultiLevel(const OrtApi& api, OrtKernelContext* ctx, const RoiAlignParams& roi_align,
                         const LevelShapeCheck& check_shapes, const Kernel& kernel) {
  MultiLevelTensors t;
  OPBRIDGE_RETURN_IF_ERROR(
      PrepareMultiLevel(api, ctx, roi_align.output_height, roi_align.output_width, check_shapes, &t));
  return ForFloatStorage(t.rois.type, [&](auto type) {
    using T = decltype(type);
    return RunMultiLevelKernel<T>(api, ctx, t, 5,
                                  [&](const cpu::FeatureLevel<T>* levels, const T* rois, T* output,
                                      ScratchAllocator& scratch, const TaskRunner& runner) {
                                    return kernel(t, levels, rois, output, scratch, runner);
                                  });
  });
}

// The maps of a prepared node as shared::FeatureMaps, maps first .. first + shared::kMaxFeatureMaps - 1
// (at most) at spatial_scales[l] for map l (one launch's worth; multi_level_roi_align_cuda.cc).
// T is the maps' storage type.
template <class T>
shared::FeatureMaps<T> FeatureMapsOf(const MultiLevelTensors& tensors, int64_t first,
                                     const std::vector<float>& spatial_scales);

// The CUDA Compute's launches (multi_level_roi_align_cuda.cc, CUDA builds): the prepared node's
// RoIs pooled from its maps, at spatial_scales[l] for map l, with `leveling`; one launch per
// shared::kMaxFeatureMaps maps; in the storage type of the RoIs and maps.
Status RunLeveledRoiAlignCuda(const OrtApi& api, OrtKernelContext* ctx, const MultiLevelTensors& tensors,
                              const RoiAlignParams& roi_align, const std::vector<float>& spatial_scales,
                              const shared::RoiLeveling& leveling);

// opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign: rois [R, 5], then one feature
// map per featmap_strides entry -> [R, C, output_height, output_width].
class MultiLevelRoiAlignOp {
 public:
  using Attrs = MultiLevelRoiAlignAttrs;  // generated from the manifest
  explicit MultiLevelRoiAlignOp(const MultiLevelRoiAlignParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<MultiLevelRoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // multi_level_roi_align_cuda.cc
  // [R, C, output_height, output_width] (absent attributes: the plugins' 7); shared by the rotated op.
  static Status InferShape(const ShapeInference& infer);

 private:
  MultiLevelRoiAlignParams params_;
};

}  // namespace opbridge::ort
