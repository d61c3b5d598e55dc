// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// MultiLevelRoiAlign: the schema and attributes of every glue class in
// src/ort/ops/multi_level_roi_align.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiLevelRoiAlign, mmdeploy::MMCVMultiLevelRoiAlign: the attributes
// MultiLevelRoiAlignOp::Create receives.
struct MultiLevelRoiAlignAttrs {
  int64_t output_height = 7;
  int64_t output_width = 7;
  int64_t pool_mode = 0;
  int64_t sampling_ratio = 2;
  std::vector<float> featmap_strides;
  float roi_scale_factor = -1.0f;
  int64_t finest_scale = 56;
  int64_t aligned = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MultiLevelRoiAlignAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MultiLevelRoiAlignAttrs::Schema() {
  static const OpSchema schema{
      {{"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"features", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, true}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output_height", AttrKind::kInt, false, 7, 0.0f, "", {}, {}},
       {"output_width", AttrKind::kInt, false, 7, 0.0f, "", {}, {}},
       {"pool_mode", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"sampling_ratio", AttrKind::kInt, false, 2, 0.0f, "", {}, {}},
       {"featmap_strides", AttrKind::kFloats, true, 0, 0.0f, "", {}, {}},
       {"roi_scale_factor", AttrKind::kFloat, false, 0, -1.0f, "", {}, {}},
       {"finest_scale", AttrKind::kInt, false, 56, 0.0f, "", {}, {}},
       {"aligned", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status MultiLevelRoiAlignAttrs::Read(const AttrReader& reader, MultiLevelRoiAlignAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_height", &attrs->output_height));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_width", &attrs->output_width));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("pool_mode", &value));
    if (value != 0 && value != 1) {
      return Status::Error("pool_mode must be 0 (max) or 1 (avg), got ", value);
    }
    attrs->pool_mode = value;
  }
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("sampling_ratio", &attrs->sampling_ratio));
  OPBRIDGE_RETURN_IF_ERROR(reader.Floats("featmap_strides", &attrs->featmap_strides));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("roi_scale_factor", &attrs->roi_scale_factor));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("finest_scale", &attrs->finest_scale));
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

inline bool MultiLevelRoiAlignAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
