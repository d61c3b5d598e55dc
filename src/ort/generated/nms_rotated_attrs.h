// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// NMSRotated: the schema and attributes of every glue class in src/ort/ops/nms_rotated.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::NmsRotated: the attributes NmsRotatedOp::Create receives.
struct NmsRotatedAttrs {
  float iou_threshold = 0.0f;
  int64_t clockwise = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, NmsRotatedAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& NmsRotatedAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"idxs", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, true, false}},
      {{"keep", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"clockwise", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status NmsRotatedAttrs::Read(const AttrReader& reader, NmsRotatedAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("clockwise", &value));
    if (value != 0 && value != 1) {
      return Status::Error("clockwise must be 0 or 1, got ", value);
    }
    attrs->clockwise = value;
  }
  return Status::Ok();
}

inline bool NmsRotatedAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// opbridge::MulticlassNmsRotated, mmdeploy::NMSRotated: the attributes MulticlassNmsRotatedOp::Create
// receives.
struct MulticlassNmsRotatedAttrs {
  float iou_threshold = 0.0f;
  float score_threshold = 0.0f;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MulticlassNmsRotatedAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MulticlassNmsRotatedAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"selected", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"score_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status MulticlassNmsRotatedAttrs::Read(const AttrReader& reader, MulticlassNmsRotatedAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("score_threshold", &attrs->score_threshold));
  return Status::Ok();
}

inline bool MulticlassNmsRotatedAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
