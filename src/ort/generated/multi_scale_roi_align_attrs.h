// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// MultiScaleRoiAlign: the schema and attributes of every glue class in
// src/ort/ops/multi_scale_roi_align.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiScaleRoiAlign: the attributes MultiScaleRoiAlignOp::Create receives.
struct MultiScaleRoiAlignAttrs {
  int64_t output_height = 0;
  int64_t output_width = 0;
  int64_t sampling_ratio = 0;
  std::vector<float> spatial_scales;
  int64_t canonical_scale = 224;
  int64_t canonical_level = 4;
  int64_t aligned = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MultiScaleRoiAlignAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MultiScaleRoiAlignAttrs::Schema() {
  static const OpSchema schema{
      {{"rois", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"features", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, true}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output_height", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"output_width", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"sampling_ratio", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"spatial_scales", AttrKind::kFloats, true, 0, 0.0f, "", {}, {}},
       {"canonical_scale", AttrKind::kInt, false, 224, 0.0f, "", {}, {}},
       {"canonical_level", AttrKind::kInt, false, 4, 0.0f, "", {}, {}},
       {"aligned", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status MultiScaleRoiAlignAttrs::Read(const AttrReader& reader, MultiScaleRoiAlignAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_height", &attrs->output_height));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("output_width", &attrs->output_width));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("sampling_ratio", &attrs->sampling_ratio));
  OPBRIDGE_RETURN_IF_ERROR(reader.Floats("spatial_scales", &attrs->spatial_scales));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("canonical_scale", &attrs->canonical_scale));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("canonical_level", &attrs->canonical_level));
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

inline bool MultiScaleRoiAlignAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
