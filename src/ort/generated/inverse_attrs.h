// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// Inverse: the schema and attributes of every glue class in src/ort/ops/inverse.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::Inverse: the attributes InverseOp::Create receives.
struct InverseAttrs {
  int64_t check_errors = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, InverseAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& InverseAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"info", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, true, false}},
      {{"check_errors", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status InverseAttrs::Read(const AttrReader& reader, InverseAttrs* attrs) {
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("check_errors", &value));
    if (value != 0 && value != 1) {
      return Status::Error("check_errors must be 0 or 1, got ", value);
    }
    attrs->check_errors = value;
  }
  return Status::Ok();
}

inline bool InverseAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
