// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// RoIAlign: the schema and attributes of every glue class in src/ort/ops/roi_align.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/roi_align.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::RoiAlign, mmcv::MMCVRoiAlign: the attributes RoiAlignOp::Create receives.
struct RoiAlignAttrs {
  int64_t output_height = 0;
  int64_t output_width = 0;
  float spatial_scale = 1.0f;
  int64_t sampling_ratio = 0;
  RoiPoolMode mode = RoiPoolMode::kAvg;
  int64_t aligned = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, RoiAlignAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& RoiAlignAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output_height", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"output_width", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"spatial_scale", AttrKind::kFloat, false, 0, 1.0f, "", {}, {}},
       {"sampling_ratio", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"mode", AttrKind::kString, false, 0, 0.0f, "avg", {}, {}},
       {"aligned", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status RoiAlignAttrs::Read(const AttrReader& reader, RoiAlignAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_height", &attrs->output_height));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_width", &attrs->output_width));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("spatial_scale", &attrs->spatial_scale));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("sampling_ratio", &attrs->sampling_ratio));
  {
    std::string value;
    OPBRIDGE_RETURN_IF_ERROR(reader.String("mode", &value));
    if (value == "avg") {
      attrs->mode = RoiPoolMode::kAvg;
    } else if (value == "max") {
      attrs->mode = RoiPoolMode::kMax;
    } else {
      return Status::Error("mode must be \"avg\" or \"max\", got ", "\"", value, "\"");
    }
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("aligned", &value));
    if (value != 0 && value != 1) {
      return Status::Error("aligned must be 0 or 1, got ", value);
    }
    attrs->aligned = value;
  }
  return Status::Ok();
}

inline bool RoiAlignAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
