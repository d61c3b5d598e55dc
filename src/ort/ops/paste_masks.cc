// Mask pasting ORT glue: opbridge::PasteMasks.
#include "ort/ops/paste_masks.h"

#include "kernels/cpu/paste_masks.h"

namespace opbridge::ort {
Status PasteMasksOp::Create(const Attrs& attrs, std::unique_ptr<PasteMasksOp>* op) {
  PasteMasksParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakePasteMasksParams(attrs.padding, &p));
  *op = std::make_unique<PasteMasksOp>(p);
  return Status::Ok();
}

Status PasteMasksOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* masks, InputTensor* boxes,
                             const int64_t** size, void** output) const {
  InputTensor image_size;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, masks));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &image_size));
  OPBRIDGE_RETURN_IF_ERROR(CheckPasteMasksShapes(params_, masks->shape, boxes->shape, image_size.shape));
  *size = image_size.Data<int64_t>();
  OPBRIDGE_RETURN_IF_ERROR(CheckPasteMasksImageSize(*size, masks->shape[0]));
  const Shape out_shape = {masks->shape[0], 1, (*size)[0], (*size)[1]};
  void* out = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &out, masks->type));
  *output = NumElements(out_shape) == 0 ? nullptr : out;
  return Status::Ok();
}

Status PasteMasksOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor masks, boxes;
  const int64_t* size = nullptr;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &masks, &boxes, &size, &output));
  if (output == nullptr) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return ForFloatStorage(masks.type, [&](auto type) {
    using T = decltype(type);
    return cpu::PasteMasks(masks.Data<T>(), masks.shape[0], masks.shape[2], boxes.Data<T>(), size[0], size[1],
                           params_.padding, static_cast<T*>(output), scratch, OrtTaskRunner(api, ctx));
  });
}

Status PasteMasksOp::InferShape(const ShapeInference& infer) {
  // N from the masks; the image height and width are values of the image_size input.
  InferredShape masks;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &masks));
  InferredShape out;
  out.dims = {masks.dims.size() == 4 ? masks.dims[0] : -1, 1, -1, -1};
  out.symbols = {masks.dims.size() == 4 ? masks.symbols[0] : "", "", "", ""};
  // Of the masks' dtype (ORT sets it from the inputs where that is unknown).
  if (masks.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, masks.type, out);
}

}  // namespace opbridge::ort
