// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// RoIAlignRotated: the schema and attributes of every glue class in src/ort/ops/roi_align_rotated.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::RoiAlignRotated, mmcv::MMCVRoIAlignRotated, mmdeploy::MMCVRoIAlignRotated: the attributes
// RoiAlignRotatedOp::Create receives.
struct RoiAlignRotatedAttrs {
  int64_t output_height = 0;
  int64_t output_width = 0;
  float spatial_scale = 1.0f;
  int64_t sampling_ratio = 0;
  int64_t aligned = 1;
  int64_t clockwise = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, RoiAlignRotatedAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& RoiAlignRotatedAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output_height", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"output_width", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"spatial_scale", AttrKind::kFloat, false, 0, 1.0f, "", {}, {}},
       {"sampling_ratio", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"aligned", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"clockwise", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status RoiAlignRotatedAttrs::Read(const AttrReader& reader, RoiAlignRotatedAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_height", &attrs->output_height));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_width", &attrs->output_width));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("spatial_scale", &attrs->spatial_scale));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("sampling_ratio", &attrs->sampling_ratio));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("aligned", &value));
    if (value != 0 && value != 1) {
      return Status::Error("aligned must be 0 or 1, got ", value);
    }
    attrs->aligned = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("clockwise", &value));
    if (value != 0 && value != 1) {
      return Status::Error("clockwise must be 0 or 1, got ", value);
    }
    attrs->clockwise = value;
  }
  return Status::Ok();
}

inline bool RoiAlignRotatedAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
