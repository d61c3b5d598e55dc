// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// ScaledDotProductAttention (ScaledDotProductAttentionTRT): the schema and attributes of every glue
// class in src/ort/ops/scaled_dot_product_attention.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::ScaledDotProductAttention, mmdeploy::ScaledDotProductAttentionTRT: the attributes
// ScaledDotProductAttentionOp::Create receives.
struct ScaledDotProductAttentionAttrs {

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, ScaledDotProductAttentionAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& ScaledDotProductAttentionAttrs::Schema() {
  static const OpSchema schema{
      {{"q", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"k", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"v", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"mask", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, true, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"attn", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {}};
  return schema;
}

inline Status ScaledDotProductAttentionAttrs::Read(const AttrReader& reader, ScaledDotProductAttentionAttrs* attrs) {
  (void)reader;
  (void)attrs;
  return Status::Ok();
}

inline bool ScaledDotProductAttentionAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
