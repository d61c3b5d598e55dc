// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// CumMax / CumMin (cummax, cummin): the schema and attributes of every glue class in
// src/ort/ops/cummax.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::CumMax, mmcv::cummax: the attributes CumMaxOp::Create receives.
struct CumMaxAttrs {
  int64_t dim = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, CumMaxAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& CumMaxAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"values", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"indices", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"dim", AttrKind::kInt, true, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64}};
  return schema;
}

inline Status CumMaxAttrs::Read(const AttrReader& reader, CumMaxAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("dim", &attrs->dim));
  return Status::Ok();
}

inline bool CumMaxAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// opbridge::CumMin, mmcv::cummin: the attributes CumMinOp::Create receives.
using CumMinAttrs = CumMaxAttrs;

}  // namespace opbridge::ort
