// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// InstanceNormalization: the schema and attributes of every glue class in src/ort/ops/instance_norm.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::InstanceNorm, mmcv::MMCVInstanceNormalization, ::MMCVInstanceNormalization,
// mmdeploy::TRTInstanceNormalization: the attributes InstanceNormOp::Create receives.
struct InstanceNormAttrs {
  float epsilon = 1e-05f;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, InstanceNormAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& InstanceNormAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scale", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"B", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"epsilon", AttrKind::kFloat, false, 0, 1e-05f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status InstanceNormAttrs::Read(const AttrReader& reader, InstanceNormAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("epsilon", &attrs->epsilon));
  return Status::Ok();
}

inline bool InstanceNormAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
