// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// NMSMatch: the schema and attributes of every glue class in src/ort/ops/nms_match.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::NmsMatch, mmdeploy::NMSMatch: the attributes NmsMatchOp::Create receives.
struct NmsMatchAttrs {

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, NmsMatchAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& NmsMatchAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"iou_threshold", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"score_threshold", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"matches", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status NmsMatchAttrs::Read(const AttrReader& reader, NmsMatchAttrs* attrs) {
  (void)reader;
  (void)attrs;
  return Status::Ok();
}

inline bool NmsMatchAttrs::CudaInputOnHost(size_t index) {
  return index == 2 || index == 3;
}

}  // namespace opbridge::ort
