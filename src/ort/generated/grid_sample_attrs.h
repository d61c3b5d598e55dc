// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// GridSample: the schema and attributes of every glue class in src/ort/ops/grid_sample.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::GridSample, mmcv::grid_sampler, mmdeploy::grid_sampler: the attributes
// GridSampleOp::Create receives.
struct GridSampleAttrs {
  int64_t interpolation_mode = 0;
  int64_t padding_mode = 0;
  int64_t align_corners = 0;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, GridSampleAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& GridSampleAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false},
       {"grid", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, false, false}},
      {{"interpolation_mode", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"padding_mode", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"align_corners", AttrKind::kInt, false, 0, 0.0f, "", {}, {}}},
      {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16}};
  return schema;
}

inline Status GridSampleAttrs::Read(const AttrReader& reader, GridSampleAttrs* attrs) {
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("interpolation_mode", &value));
    if (value != 0 && value != 1 && value != 2) {
      return Status::Error("interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got ", value);
    }
    attrs->interpolation_mode = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("padding_mode", &value));
    if (value != 0 && value != 1 && value != 2) {
      return Status::Error("padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ", value);
    }
    attrs->padding_mode = value;
  }
  {
    int64_t value = 0;
    OPBRIDGE_RETURN_IF_ERROR(reader.Int("align_corners", &value));
    if (value != 0 && value != 1) {
      return Status::Error("align_corners must be 0 or 1, got ", value);
    }
    attrs->align_corners = value;
  }
  return Status::Ok();
}

inline bool GridSampleAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
