// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// CornerPool: the schema and attributes of every glue class in src/ort/ops/corner_pool.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::CornerPool, mmcv::MMCVCornerPool: the attributes CornerPoolOp::Create receives.
struct CornerPoolAttrs {
  int64_t mode = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, CornerPoolAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& CornerPoolAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"mode", AttrKind::kInt, true, 0, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status CornerPoolAttrs::Read(const AttrReader& reader, CornerPoolAttrs* attrs) {
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("mode", &value));
    if (value != 0 && value != 1 && value != 2 && value != 3) {
      return Status::Error("mode must be 0 (top), 1 (bottom), 2 (left) or 3 (right), got ", value);
    }
    attrs->mode = value;
  }
  return Status::Ok();
}

inline bool CornerPoolAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
