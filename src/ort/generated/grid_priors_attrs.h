// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// GridPriors (GridPriorsTRT): the schema and attributes of every glue class in
// src/ort/ops/grid_priors.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GridPriors, mmdeploy::GridPriorsTRT: the attributes GridPriorsOp::Create receives.
struct GridPriorsAttrs {
  int64_t stride_h = 1;
  int64_t stride_w = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, GridPriorsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& GridPriorsAttrs::Schema() {
  static const OpSchema schema{
      {{"base_anchors", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"h_provider", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"w_provider", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"stride_h", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"stride_w", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE}};
  return schema;
}

inline Status GridPriorsAttrs::Read(const AttrReader& reader, GridPriorsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("stride_h", &attrs->stride_h));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("stride_w", &attrs->stride_w));
  return Status::Ok();
}

inline bool GridPriorsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
