// Soft-NMS ORT glue: mmcv::SoftNonMaxSuppression and opbridge::SoftNonMaxSuppression.
#include "ort/ops/soft_nms.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/soft_nms.h"

namespace opbridge::ort {

Status SoftNmsOp::Create(const Attrs& attrs, std::unique_ptr<SoftNmsOp>* op) {
  SoftNmsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeSoftNmsParams(attrs.iou_threshold, attrs.sigma, attrs.min_score, attrs.method,
                                             attrs.offset, &p));
  *op = std::make_unique<SoftNmsOp>(p);
  return Status::Ok();
}

Status SoftNmsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  return CheckSoftNmsShapes(boxes->shape, scores->shape);
}

Status SoftNmsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  const int64_t n = boxes.shape[0];
  // The kept count is only known after the run: compute into scratch, then copy out.
  const size_t kernel_bytes = cpu::SoftNmsScratchBytes(n);
  const size_t result_bytes = static_cast<size_t>(n) * (5 * sizeof(float) + sizeof(int64_t));
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  const size_t bytes = std::max<size_t>(kernel_bytes + result_bytes, 8);
  ScratchBlock block(scratch, bytes);
  void* memory = block.data();
  if (memory == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  auto* inds = reinterpret_cast<int64_t*>(static_cast<char*>(memory) + kernel_bytes);
  auto* dets = reinterpret_cast<float*>(inds + n);
  int64_t kept = 0;
  cpu::SoftNms(params_, boxes.Data<float>(), scores.Data<float>(), n, memory, dets, inds, &kept);
  void* dets_out = nullptr;
  void* inds_out = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {kept, 5}, &dets_out));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, {kept}, &inds_out));
  if (kept > 0) {
    std::memcpy(dets_out, dets, sizeof(float) * static_cast<size_t>(kept) * 5);
    std::memcpy(inds_out, inds, sizeof(int64_t) * static_cast<size_t>(kept));
  }
  return Status::Ok();
}

Status SoftNmsOp::InferShape(const ShapeInference& infer) {
  // K is data-dependent: one fresh symbol, shared by both outputs.
  const std::string kept = ShapeInference::NewSymbol("kept");
  InferredShape dets, inds;
  dets.dims = {-1, 5};
  dets.symbols = {kept, ""};
  inds.dims = {-1};
  inds.symbols = {kept};
  OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, dets));
  return infer.SetOutput(1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, inds);
}

}  // namespace opbridge::ort
