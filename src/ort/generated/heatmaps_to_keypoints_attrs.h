// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// HeatmapsToKeypoints: the schema and attributes of every glue class in
// src/ort/ops/heatmaps_to_keypoints.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::HeatmapsToKeypoints: the attributes HeatmapsToKeypointsOp::Create receives.
struct HeatmapsToKeypointsAttrs {

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, HeatmapsToKeypointsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& HeatmapsToKeypointsAttrs::Schema() {
  static const OpSchema schema{
      {{"maps", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"keypoints", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {}};
  return schema;
}

inline Status HeatmapsToKeypointsAttrs::Read(const AttrReader& reader, HeatmapsToKeypointsAttrs* attrs) {
  (void)reader;
  (void)attrs;
  return Status::Ok();
}

inline bool HeatmapsToKeypointsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
