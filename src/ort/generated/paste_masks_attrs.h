// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// PasteMasks: the schema and attributes of every glue class in src/ort/ops/paste_masks.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::PasteMasks: the attributes PasteMasksOp::Create receives.
struct PasteMasksAttrs {
  int64_t padding = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, PasteMasksAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& PasteMasksAttrs::Schema() {
  static const OpSchema schema{
      {{"masks", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"image_size", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"padding", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status PasteMasksAttrs::Read(const AttrReader& reader, PasteMasksAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("padding", &attrs->padding));
  return Status::Ok();
}

inline bool PasteMasksAttrs::CudaInputOnHost(size_t index) {
  return index == 2;
}

}  // namespace opbridge::ort
