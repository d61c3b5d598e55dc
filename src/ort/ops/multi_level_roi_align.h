// Multi-level RoIAlign ORT glue.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/multi_level_roi_align.h"
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel
#include "kernels/shared/roi_align_levels.h"
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

// The CUDA Compute's launches (multi_level_roi_align_cuda.cc, CUDA builds): the prepared node's
// RoIs pooled from its maps, at spatial_scales[l] for map l, with `leveling`; one launch per
// shared::kMaxFeatureMaps maps.
Status RunLeveledRoiAlignCuda(const OrtApi& api, OrtKernelContext* ctx, const MultiLevelTensors& tensors,
                              const RoiAlignParams& roi_align, const std::vector<float>& spatial_scales,
                              const shared::RoiLeveling& leveling);

// The TensorRT plugins' schema: rois, then the variadic maps; attribute names and defaults are
// the plugins' (their creators read every one as optional except featmap_strides). The two
// plugins differ only in their third attribute, `mode_name`: pool_mode (axis-aligned) or
// clockwise (rotated), both with default 0.
OpSchema MultiLevelRoiSchema(const char* mode_name);

// Those attributes as the node gives them.
struct MultiLevelAttributes {
  int64_t output_height = 0, output_width = 0, mode = 0, sampling_ratio = 0, finest_scale = 0, aligned = 0;
  float roi_scale_factor = 0.0f;
  std::vector<float> featmap_strides;
};
Status ReadMultiLevelAttributes(const AttrReader& attrs, const char* mode_name, MultiLevelAttributes* values);

// opbridge::MultiLevelRoiAlign and mmdeploy::MMCVMultiLevelRoiAlign: rois [R, 5], then one feature
// map per featmap_strides entry -> [R, C, output_height, output_width].
class MultiLevelRoiAlignOp {
 public:
  explicit MultiLevelRoiAlignOp(const MultiLevelRoiAlignParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<MultiLevelRoiAlignOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // multi_level_roi_align_cuda.cc
  static bool CudaInputOnHost(size_t) { return false; }
  // [R, C, output_height, output_width] (absent attributes: the plugins' 7); shared by the rotated op.
  static Status InferShape(const ShapeInference& infer);

 private:
  MultiLevelRoiAlignParams params_;
};

}  // namespace opbridge::ort
