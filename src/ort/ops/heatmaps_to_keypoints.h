// Keypoint decoding ORT glue.
#pragma once

#include <memory>

#include "core/heatmaps_to_keypoints.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::HeatmapsToKeypoints: maps [R, K, H, W], rois [R, 4] -> keypoints [R, K, 3], scores [R, K].
class HeatmapsToKeypointsOp {
 public:
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<HeatmapsToKeypointsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);
};

}  // namespace opbridge::ort
