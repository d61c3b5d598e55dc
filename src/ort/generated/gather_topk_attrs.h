// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// GatherTopk: the schema and attributes of every glue class in src/ort/ops/gather_topk.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GatherTopk, mmdeploy::GatherTopk: the attributes GatherTopkOp::Create receives.
struct GatherTopkAttrs {

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, GatherTopkAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& GatherTopkAttrs::Schema() {
  static const OpSchema schema{
      {{"data", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"indices", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64}};
  return schema;
}

inline Status GatherTopkAttrs::Read(const AttrReader& reader, GatherTopkAttrs* attrs) {
  (void)reader;
  (void)attrs;
  return Status::Ok();
}

inline bool GatherTopkAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
