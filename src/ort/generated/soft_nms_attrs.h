// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// SoftNonMaxSuppression: the schema and attributes of every glue class in src/ort/ops/soft_nms.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::SoftNonMaxSuppression, mmcv::SoftNonMaxSuppression: the attributes SoftNmsOp::Create
// receives.
struct SoftNmsAttrs {
  float iou_threshold = 0.3f;
  float sigma = 0.5f;
  float min_score = 0.001f;
  int64_t method = 1;
  int64_t offset = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, SoftNmsAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& SoftNmsAttrs::Schema() {
  static const OpSchema schema{
      {{"boxes", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"scores", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"dets", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"inds", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, false, false}},
      {{"iou_threshold", AttrKind::kFloat, false, 0, 0.3f, "", {}, {}},
       {"sigma", AttrKind::kFloat, false, 0, 0.5f, "", {}, {}},
       {"min_score", AttrKind::kFloat, false, 0, 0.001f, "", {}, {}},
       {"method", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"offset", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status SoftNmsAttrs::Read(const AttrReader& reader, SoftNmsAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("iou_threshold", &attrs->iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("sigma", &attrs->sigma));
  OPBRIDGE_RETURN_IF_ERROR(reader.Float("min_score", &attrs->min_score));
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("method", &value));
    if (value != 0 && value != 1 && value != 2) {
      return Status::Error("method must be 0 (naive), 1 (linear) or 2 (gaussian), got ", value);
    }
    attrs->method = value;
  }
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

inline bool SoftNmsAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
