// Deformable convolution ORT glue: three node layouts, one kernel per provider (CPU:
// deform_conv.cc; CUDA: deform_conv_cuda.cc).
//   DeformConvOp           mmcv::MMCVDeformConv2d, mmdeploy::MMCVDeformConv2d (input, offset, weight)
//   ModulatedDeformConvOp  mmcv/mmdeploy::MMCVModulatedDeformConv2d (input, offset, mask, weight, [bias])
//   DeformConv2dOp         opbridge::DeformConv2d (input, offset, weight, [mask], [bias])
#pragma once

#include <memory>
#include <vector>

#include "core/deform_conv.h"
#include "ort/generated/deform_conv_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// Where each tensor is among a layout's inputs (-1: the layout has no such input).
struct DeformConvInputs {
  int input, offset, mask, weight, bias;
};

class DeformConvOpBase {
 public:
  DeformConvOpBase(const DeformConvParams& params, DeformConvInputs inputs) : params_(params), inputs_(inputs) {}
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // deform_conv_cuda.cc

 protected:
  // Create() of every layout: stride, padding, dilation, groups and deform_groups into params, then
  // the op. mmcv's extra attributes (bias and im2col_step) mean nothing here; the reader checked
  // their kind.
  template <class Layout>
  static Status CreateLayout(const typename Layout::Attrs& attrs, std::unique_ptr<Layout>* op) {
    DeformConvParams params;
    OPBRIDGE_RETURN_IF_ERROR(MakeDeformConvParams(attrs.stride, attrs.padding, attrs.dilation, attrs.groups,
                                                  attrs.deform_groups, &params));
    *op = std::make_unique<Layout>(params, Layout::kInputs);
    return Status::Ok();
  }
  static Status InferShapeOf(const ShapeInference& infer, DeformConvInputs inputs);

 private:
  // What both providers do first: the inputs of the layout (shapes checked), the allocated output
  // and the call's arguments; *empty when the output has no elements (nothing to compute).
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, DeformConvArgs* args, bool* empty) const;

  DeformConvParams params_;
  DeformConvInputs inputs_;
};

class DeformConvOp : public DeformConvOpBase {
 public:
  using Attrs = DeformConvAttrs;  // generated from the manifest
  static constexpr DeformConvInputs kInputs{0, 1, -1, 2, -1};
  using DeformConvOpBase::DeformConvOpBase;
  static Status Create(const Attrs& attrs, std::unique_ptr<DeformConvOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

class ModulatedDeformConvOp : public DeformConvOpBase {
 public:
  using Attrs = ModulatedDeformConvAttrs;  // generated from the manifest
  static constexpr DeformConvInputs kInputs{0, 1, 2, 3, 4};
  using DeformConvOpBase::DeformConvOpBase;
  static Status Create(const Attrs& attrs, std::unique_ptr<ModulatedDeformConvOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

class DeformConv2dOp : public DeformConvOpBase {
 public:
  using Attrs = DeformConv2dAttrs;  // generated from the manifest
  static constexpr DeformConvInputs kInputs{0, 1, 3, 2, 4};
  using DeformConvOpBase::DeformConvOpBase;
  static Status Create(const Attrs& attrs, std::unique_ptr<DeformConv2dOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

}  // namespace opbridge::ort
