// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// NMS: the schema and attributes of every glue class in src/ort/ops/nms.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::Nms, mmcv::NonMaxSuppression: the attributes NmsOp::Create receives.
struct NmsAttrs {
  float iou_threshold = 0.0f;
  int64_t offset = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, NmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& NmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"keep", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"offset", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status NmsAttrs::Read(const AttrReader& reader, NmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("offset", &value));
    if (value != 0 && value != 1) {
      return Status::Error("offset must be 0 or 1, got ", value);
    }
    attrs->offset = value;
  }
  return Status::Ok();
}

inline bool NmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// opbridge::BatchedNms: the attributes BatchedNmsOp::Create receives.
struct BatchedNmsAttrs {
  float iou_threshold = 0.0f;
  int64_t offset = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, BatchedNmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& BatchedNmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"idxs", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"keep", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"offset", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status BatchedNmsAttrs::Read(const AttrReader& reader, BatchedNmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("offset", &value));
    if (value != 0 && value != 1) {
      return Status::Error("offset must be 0 or 1, got ", value);
    }
    attrs->offset = value;
  }
  return Status::Ok();
}

inline bool BatchedNmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// opbridge::MulticlassNms: the attributes MulticlassNmsOp::Create receives.
struct MulticlassNmsAttrs {
  float iou_threshold = 0.0f;
  float score_threshold = 0.0f;
  int64_t max_output_boxes_per_class = -1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, MulticlassNmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& MulticlassNmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"selected", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, true, 0, 0.0f, "", {}, {}},
       {"score_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}},
       {"max_output_boxes_per_class", AttrKind::kInt, false, -1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status MulticlassNmsAttrs::Read(const AttrReader& reader, MulticlassNmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("score_threshold", &attrs->score_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("max_output_boxes_per_class", &attrs->max_output_boxes_per_class));
  return Status::Ok();
}

inline bool MulticlassNmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
