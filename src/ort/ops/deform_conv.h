// Deformable convolution ORT glue: three node layouts, one kernel.
//   DeformConvOp           mmcv::MMCVDeformConv2d, mmdeploy::MMCVDeformConv2d (input, offset, weight)
//   ModulatedDeformConvOp  mmcv/mmdeploy::MMCVModulatedDeformConv2d (input, offset, mask, weight, [bias])
//   DeformConv2dOp         opbridge::DeformConv2d (input, offset, weight, [mask], [bias])
#pragma once

#include <memory>
#include <vector>

#include "core/deform_conv.h"
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

 protected:
  // Reads stride, padding, dilation, groups and deform_groups (and checks the ignored extras).
  static Status ReadParams(const AttrReader& attrs, const std::vector<AttrSpec>& specs, DeformConvParams* params);
  // Create() of every layout: its attributes into params, then the op.
  template <class Layout>
  static Status CreateLayout(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<Layout>* op) {
    const std::vector<AttrSpec>& specs = Layout::Schema().attrs;
    DeformConvParams params;
    OPBRIDGE_RETURN_IF_ERROR(ReadParams(AttrReader(api, info, specs), specs, &params));
    *op = std::make_unique<Layout>(params, Layout::kInputs);
    return Status::Ok();
  }
  static Status InferShapeOf(const ShapeInference& infer, DeformConvInputs inputs);

 private:
  DeformConvParams params_;
  DeformConvInputs inputs_;
};

class DeformConvOp : public DeformConvOpBase {
 public:
  static constexpr DeformConvInputs kInputs{0, 1, -1, 2, -1};
  using DeformConvOpBase::DeformConvOpBase;
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<DeformConvOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

class ModulatedDeformConvOp : public DeformConvOpBase {
 public:
  static constexpr DeformConvInputs kInputs{0, 1, 2, 3, 4};
  using DeformConvOpBase::DeformConvOpBase;
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<ModulatedDeformConvOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

class DeformConv2dOp : public DeformConvOpBase {
 public:
  static constexpr DeformConvInputs kInputs{0, 1, 3, 2, 4};
  using DeformConvOpBase::DeformConvOpBase;
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<DeformConv2dOp>* op);
  static Status InferShape(const ShapeInference& infer) { return InferShapeOf(infer, kInputs); }
};

}  // namespace opbridge::ort
