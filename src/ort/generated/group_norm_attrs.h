// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// GroupNormalization: the schema and attributes of every glue class in src/ort/ops/group_norm.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GroupNorm: the attributes GroupNormOp::Create receives.
struct GroupNormAttrs {
  int64_t num_groups = 0;
  float epsilon = 1e-05f;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, GroupNormAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& GroupNormAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scale", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, true, false},
       {"bias", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, true, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"num_groups", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"epsilon", AttrKind::kFloat, false, 0, 1e-05f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status GroupNormAttrs::Read(const AttrReader& reader, GroupNormAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("num_groups", &attrs->num_groups));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("epsilon", &attrs->epsilon));
  return Status::Ok();
}

inline bool GroupNormAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// mydomain::mygroupnorm, mydomain::testgroupnorm, org.pytorch.mydomain::testgroupnorm: the attributes
// TutorialGroupNormOp::Create receives.
struct TutorialGroupNormAttrs {
  float epsilon = 1e-05f;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, TutorialGroupNormAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& TutorialGroupNormAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"num_groups", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scale", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"bias", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"epsilon", AttrKind::kFloat, false, 0, 1e-05f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status TutorialGroupNormAttrs::Read(const AttrReader& reader, TutorialGroupNormAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("epsilon", &attrs->epsilon));
  return Status::Ok();
}

inline bool TutorialGroupNormAttrs::CudaInputOnHost(size_t index) {
  return index == 1;
}

}  // namespace opbridge::ort
