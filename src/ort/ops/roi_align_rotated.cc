// RoIAlignRotated ORT glue: opbridge::RoiAlignRotated, mmcv::MMCVRoIAlignRotated and
// mmdeploy::MMCVRoIAlignRotated (the same op; mmcv's and mmdeploy's exporters write every attribute).
#include "ort/ops/roi_align_rotated.h"

#include "core/roi_align.h"
#include "ort/ops/roi_align.h"
#include "kernels/cpu/roi_align_rotated.h"

namespace opbridge::ort {

Status RoiAlignRotatedOp::Create(const Attrs& attrs, std::unique_ptr<RoiAlignRotatedOp>* op) {
  RoiAlignRotatedParams p;
  p.output_height = attrs.output_height;
  p.output_width = attrs.output_width;
  p.spatial_scale = attrs.spatial_scale;
  p.sampling_ratio = attrs.sampling_ratio;
  p.aligned = attrs.aligned == 1;
  p.clockwise = attrs.clockwise == 1;
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRotatedParams(p));
  *op = std::make_unique<RoiAlignRotatedOp>(p);
  return Status::Ok();
}

Status RoiAlignRotatedOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* rois,
                                  float** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, rois));
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRotatedShapes(input->shape, rois->shape));
  const Shape out_shape = RoiAlignRotatedOutputShape(params_, input->shape, rois->shape);
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 0, out_shape, &data));  // the per-call limit
  *output = NumElements(out_shape) == 0 ? nullptr : static_cast<float*>(data);
  return Status::Ok();
}

Status RoiAlignRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, rois;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &rois, &output));
  const int64_t batch = input.shape[0];
  OPBRIDGE_RETURN_IF_ERROR(CheckRoiAlignRois(rois.Data<float>(), rois.shape[0], batch, 6));
  if (output == nullptr) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::RoiAlignRotated(params_, input.Data<float>(), batch, input.shape[1], input.shape[2],
                              input.shape[3], rois.Data<float>(), rois.shape[0], output, scratch,
                              OrtTaskRunner(api, ctx));
}

Status RoiAlignRotatedOp::InferShape(const ShapeInference& infer) {
  return InferRoiPoolingShape(infer, 0, 1);
}

}  // namespace opbridge::ort
