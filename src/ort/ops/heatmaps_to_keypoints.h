// Keypoint decoding ORT glue.
#pragma once

#include <memory>

#include "core/heatmaps_to_keypoints.h"
#include "ort/generated/heatmaps_to_keypoints_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::HeatmapsToKeypoints: maps [R, K, H, W], rois [R, 4] -> keypoints [R, K, 3], scores [R, K].
class HeatmapsToKeypointsOp {
 public:
  using Attrs = HeatmapsToKeypointsAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<HeatmapsToKeypointsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // heatmaps_to_keypoints_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs, their shape checks and the outputs (null when they have no
  // elements).
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* maps, InputTensor* rois, float** xy,
                        float** scores);
};

}  // namespace opbridge::ort
