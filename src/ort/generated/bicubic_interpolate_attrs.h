// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// BicubicInterpolate (TRTBicubicInterpolate): the schema and attributes of every glue class in
// src/ort/ops/bicubic_interpolate.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::BicubicInterpolate, mmdeploy::TRTBicubicInterpolate: the attributes
// BicubicInterpolateOp::Create receives.
struct BicubicInterpolateAttrs {
  std::vector<float> scale_factor;
  int64_t align_corners = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, BicubicInterpolateAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& BicubicInterpolateAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"scale_factor", AttrKind::kFloats, true, 0, 0.0f, "", {}, {}},
       {"align_corners", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status BicubicInterpolateAttrs::Read(const AttrReader& reader, BicubicInterpolateAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Floats("scale_factor", &attrs->scale_factor));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("align_corners", &value));
    if (value != 0 && value != 1) {
      return Status::Error("align_corners must be 0 or 1, got ", value);
    }
    attrs->align_corners = value;
  }
  return Status::Ok();
}

inline bool BicubicInterpolateAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
