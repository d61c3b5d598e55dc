// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// TRTBatchedNMS: the schema and attributes of every glue class in src/ort/ops/trt_batched_nms.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::TrtBatchedNms, mmdeploy::TRTBatchedNMS: the attributes TrtBatchedNmsOp::Create receives.
struct TrtBatchedNmsAttrs {
  int64_t background_label_id = 0;
  int64_t num_classes = 0;
  int64_t topk = 0;
  int64_t keep_topk = 0;
  float score_threshold = 0.0f;
  float iou_threshold = 0.0f;
  int64_t is_normalized = 0;
  int64_t clip_boxes = 1;
  int64_t return_index = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, TrtBatchedNmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& TrtBatchedNmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"dets", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"labels", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, false, false},
       {"index", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, true, false}},
      {{"background_label_id", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"num_classes", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"topk", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"keep_topk", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"score_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}},
       {"iou_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}},
       {"is_normalized", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"clip_boxes", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"return_index", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status TrtBatchedNmsAttrs::Read(const AttrReader& reader, TrtBatchedNmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("background_label_id", &attrs->background_label_id));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("num_classes", &attrs->num_classes));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("topk", &attrs->topk));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("keep_topk", &attrs->keep_topk));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("score_threshold", &attrs->score_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("is_normalized", &value));
    if (value != 0 && value != 1) {
      return Status::Error("is_normalized must be 0 or 1, got ", value);
    }
    attrs->is_normalized = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("clip_boxes", &value));
    if (value != 0 && value != 1) {
      return Status::Error("clip_boxes must be 0 or 1, got ", value);
    }
    attrs->clip_boxes = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("return_index", &value));
    if (value != 0 && value != 1) {
      return Status::Error("return_index must be 0 or 1, got ", value);
    }
    attrs->return_index = value;
  }
  return Status::Ok();
}

inline bool TrtBatchedNmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// opbridge::TrtBatchedRotatedNms, mmdeploy::TRTBatchedRotatedNMS: the attributes
// TrtBatchedRotatedNmsOp::Create receives.
struct TrtBatchedRotatedNmsAttrs {
  int64_t background_label_id = 0;
  int64_t num_classes = 0;
  int64_t topk = 0;
  int64_t keep_topk = 0;
  float score_threshold = 0.0f;
  float iou_threshold = 0.0f;
  int64_t is_normalized = 0;
  int64_t clip_boxes = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, TrtBatchedRotatedNmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& TrtBatchedRotatedNmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"dets", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"labels", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, false, false}},
      {{"background_label_id", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"num_classes", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"topk", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"keep_topk", AttrKind::kInt, true, 0, 0.0f, "", {}, {}},
       {"score_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}},
       {"iou_threshold", AttrKind::kFloat, false, 0, 0.0f, "", {}, {}},
       {"is_normalized", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"clip_boxes", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status TrtBatchedRotatedNmsAttrs::Read(const AttrReader& reader, TrtBatchedRotatedNmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("background_label_id", &attrs->background_label_id));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("num_classes", &attrs->num_classes));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("topk", &attrs->topk));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("keep_topk", &attrs->keep_topk));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("score_threshold", &attrs->score_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("is_normalized", &value));
    if (value != 0 && value != 1) {
      return Status::Error("is_normalized must be 0 or 1, got ", value);
    }
    attrs->is_normalized = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("clip_boxes", &value));
    if (value != 0 && value != 1) {
      return Status::Error("clip_boxes must be 0 or 1, got ", value);
    }
    attrs->clip_boxes = value;
  }
  return Status::Ok();
}

inline bool TrtBatchedRotatedNmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
