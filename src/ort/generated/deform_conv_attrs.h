// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// DeformConv2d: the schema and attributes of every glue class in src/ort/ops/deform_conv.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::DeformConv2d: the attributes DeformConv2dOp::Create receives.
struct DeformConv2dAttrs {
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
  int64_t deform_groups = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, DeformConv2dAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& DeformConv2dAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"offset", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"weight", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"mask", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, true, false},
       {"bias", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, true, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"stride", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"padding", AttrKind::kInts, false, 0, 0.0f, "", {0, 0}, {}},
       {"dilation", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"deform_groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status DeformConv2dAttrs::Read(const AttrReader& reader, DeformConv2dAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("stride", &attrs->stride));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("padding", &attrs->padding));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("dilation", &attrs->dilation));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("groups", &attrs->groups));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("deform_groups", &attrs->deform_groups));
  return Status::Ok();
}

inline bool DeformConv2dAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// mmcv::MMCVDeformConv2d, mmdeploy::MMCVDeformConv2d: the attributes DeformConvOp::Create receives.
struct DeformConvAttrs {
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
  int64_t deform_groups = 1;
  int64_t bias = 0;
  int64_t im2col_step = 32;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, DeformConvAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& DeformConvAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"offset", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"weight", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"stride", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"padding", AttrKind::kInts, false, 0, 0.0f, "", {0, 0}, {}},
       {"dilation", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"deform_groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"bias", AttrKind::kInt, false, 0, 0.0f, "", {}, {}},
       {"im2col_step", AttrKind::kInt, false, 32, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status DeformConvAttrs::Read(const AttrReader& reader, DeformConvAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("stride", &attrs->stride));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("padding", &attrs->padding));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("dilation", &attrs->dilation));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("groups", &attrs->groups));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("deform_groups", &attrs->deform_groups));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("bias", &attrs->bias));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("im2col_step", &attrs->im2col_step));
  return Status::Ok();
}

inline bool DeformConvAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

// mmcv::MMCVModulatedDeformConv2d, mmdeploy::MMCVModulatedDeformConv2d: the attributes
// ModulatedDeformConvOp::Create receives.
struct ModulatedDeformConvAttrs {
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
  int64_t deform_groups = 1;

  // The node's inputs, outputs, attributes and defaults, as ORT needs them.
  static const OpSchema& Schema();
  // Reads every attribute (its default where the node has none) and checks the allowed values.
  static Status Read(const AttrReader& reader, ModulatedDeformConvAttrs* attrs);
  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).
  static bool CudaInputOnHost(size_t index);
};

inline const OpSchema& ModulatedDeformConvAttrs::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"offset", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"mask", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"weight", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false},
       {"bias", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, true, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false, false}},
      {{"stride", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"padding", AttrKind::kInts, false, 0, 0.0f, "", {0, 0}, {}},
       {"dilation", AttrKind::kInts, false, 0, 0.0f, "", {1, 1}, {}},
       {"groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}},
       {"deform_groups", AttrKind::kInt, false, 1, 0.0f, "", {}, {}}}};
  return schema;
}

inline Status ModulatedDeformConvAttrs::Read(const AttrReader& reader, ModulatedDeformConvAttrs* attrs) {
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("stride", &attrs->stride));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("padding", &attrs->padding));
  OPBRIDGE_RETURN_IF_ERROR(reader.Ints("dilation", &attrs->dilation));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("groups", &attrs->groups));
  OPBRIDGE_RETURN_IF_ERROR(reader.Int("deform_groups", &attrs->deform_groups));
  return Status::Ok();
}

inline bool ModulatedDeformConvAttrs::CudaInputOnHost(size_t index) {
  (void)index;
  return false;
}

}  // namespace opbridge::ort
