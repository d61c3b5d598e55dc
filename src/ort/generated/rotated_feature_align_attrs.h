// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// RotatedFeatureAlign: the schema and attributes of every glue class in
// src/ort/ops/rotated_feature_align.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::RotatedFeatureAlign, mmcv::MMCVRotatedFeatureAlign: the attributes
// RotatedFeatureAlignOp::Create receives.
struct RotatedFeatureAlignAttrs {
  float spatial_scale = 0.0f;
  int64_t points = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, RotatedFeatureAlignAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& RotatedFeatureAlignAttrs::Schema() {
  static const OpSchema schema{
      {{"features", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"best_rbboxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"spatial_scale", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"points", AttrKind::kInt, true, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status RotatedFeatureAlignAttrs::Read(const AttrReader& reader, RotatedFeatureAlignAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("spatial_scale", &attrs->spatial_scale));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("points", &value));
    if (value != 1 && value != 5) {
      return Status::Error("points must be 1 (the box centre) or 5 (the centre and the 4 corners), got ", value);
    }
    attrs->points = value;
  }
  return Status::Ok();
}

inline bool RotatedFeatureAlignAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
