// Multi-level RoIAlign ORT glue.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/multi_level_roi_align.h"
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel
#include "ort/ort_util.h"

namespace opbridge::ort {

// Compute of a multi-level RoI node (rois [R, roi_width], then the feature maps): checks the
// shapes with `check_shapes` and the batch indices, allocates the output [R, C, output_height,
// output_width], and runs `kernel` on it unless it is empty.
using LevelShapeCheck = std::function<Status(const Shape& rois, const std::vector<Shape>& features)>;
using LevelKernel = std::function<Status(const cpu::FeatureLevel* levels, int64_t batch, int64_t channels,
                                         const float* rois, int64_t num_rois, float* output,
                                         ScratchAllocator& scratch, const TaskRunner& runner)>;
Status ComputeMultiLevel(const OrtApi& api, OrtKernelContext* ctx, int64_t roi_width, int64_t output_height,
                         int64_t output_width, const LevelShapeCheck& check_shapes, const LevelKernel& kernel);

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
  // [R, C, output_height, output_width] (absent attributes: the plugins' 7); shared by the rotated op.
  static Status InferShape(const ShapeInference& infer);

 private:
  MultiLevelRoiAlignParams params_;
};

}  // namespace opbridge::ort
