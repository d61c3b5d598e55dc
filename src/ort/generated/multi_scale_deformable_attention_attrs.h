// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// MultiScaleDeformableAttention: the schema and attributes of every glue class in
// src/ort/ops/multi_scale_deformable_attention.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::MultiScaleDeformableAttention: the attributes MultiScaleDeformableAttentionOp::Create
// receives.
struct MultiScaleDeformableAttentionAttrs {

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MultiScaleDeformableAttentionAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MultiScaleDeformableAttentionAttrs::Schema() {
  static const OpSchema schema{
      {{"value", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"spatial_shapes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"level_start_index", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"sampling_locations", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"attention_weights", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64}};
  return schema;
}

inline Status MultiScaleDeformableAttentionAttrs::Read(const AttrReader& reader, MultiScaleDeformableAttentionAttrs* attrs) {
  (void)reader;
  (void)attrs;
  return Status::Ok();
}

inline bool MultiScaleDeformableAttentionAttrs::CudaInputOnHost(size_t index) {
  return index == 1 || index == 2;
}

// mmdeploy::MMCVMultiScaleDeformableAttention: the attributes
// MmdeployMultiScaleDeformableAttentionOp::Create receives.
struct MmdeployMultiScaleDeformableAttentionAttrs {
  int64_t im2col_step = 64;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MmdeployMultiScaleDeformableAttentionAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MmdeployMultiScaleDeformableAttentionAttrs::Schema() {
  static const OpSchema schema{
      {{"value", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"spatial_shapes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"level_start_index", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"sampling_locations", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"attention_weights", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"im2col_step", AttrKind::kInt, false, 64, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64}};
  return schema;
}

inline Status MmdeployMultiScaleDeformableAttentionAttrs::Read(const AttrReader& reader, MmdeployMultiScaleDeformableAttentionAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("im2col_step", &attrs->im2col_step));
  return Status::Ok();
}

inline bool MmdeployMultiScaleDeformableAttentionAttrs::CudaInputOnHost(size_t index) {
  return index == 1 || index == 2;
}

}  // namespace opbridge::ort
