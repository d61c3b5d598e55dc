// Multi-level RoIAlign ORT glue.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/multi_level_roi_align.h"
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
  float* output = nullptr;  // [R, C, output_height, output_width]; null when it has no elements
  int64_t batch = 0, channels = 0, num_rois = 0;
};
using LevelShapeCheck = std::function<Status(const Shape& rois, const std::vector<Shape>& features)>;
// The inputs, their shapes checked with `check_shapes`, and the output allocated.
Status PrepareMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t output_height, int64_t output_width,
                         const LevelShapeCheck& check_shapes, MultiLevelTensors* tensors);

// The CPU Compute of a multi-level RoI node (MultiScaleRoiAlign and the multi-level RoIAlign ops):
// PrepareMultiLevel, the RoIs' batch indices checked, then `kernel` unless the output is empty.
using LevelKernel = std::function<Status(const cpu::FeatureLevel* levels, int64_t batch, int64_t channels,
                                         const float* rois, int64_t num_rois, float* output,
                                         ScratchAllocator& scratch, const TaskRunner& runner)>;
Status ComputeMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t roi_width, int64_t output_height,
                         int64_t output_width, const LevelShapeCheck& check_shapes, const LevelKernel& kernel);

// The maps of a prepared node as shared::FeatureMaps, maps first .. first + shared::kMaxFeatureMaps - 1
// (at most) at spatial_scales[l] for map l (one launch's worth; multi_level_roi_align_cuda.cc).
shared::FeatureMaps FeatureMapsOf(const MultiLevelTensors& tensors, int64_t first,
                                  const std::vector<float>& spatial_scales);

// The CUDA Compute's launches (multi_level_roi_align_cuda.cc, CUDA builds): the prepared node's
// RoIs pooled from its maps, at spatial_scales[l] for map l, with `leveling`; one launch per
// shared::kMaxFeatureMaps maps.
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
