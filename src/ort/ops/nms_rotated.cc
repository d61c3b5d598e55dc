// Rotated NMS ORT glue: opbridge::NmsRotated, opbridge::MulticlassNmsRotated and
// mmdeploy::NMSRotated.
#include "ort/ops/nms_rotated.h"

#include "kernels/cpu/nms_rotated.h"
#include "ort/ops/nms.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kInt64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
}  // namespace

Status NmsRotatedOp::Create(const Attrs& attrs, std::unique_ptr<NmsRotatedOp>* op) {
  NmsRotatedParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeNmsRotatedParams(attrs.iou_threshold, attrs.clockwise, &p));
  *op = std::make_unique<NmsRotatedOp>(p);
  return Status::Ok();
}

Status NmsRotatedOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                             InputTensor* idxs) const {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  if (count > 2) OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, idxs));
  return CheckNmsRotatedShapes(boxes->shape, scores->shape, idxs->present ? &idxs->shape : nullptr);
}

Status NmsRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores, idxs;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &idxs));
  return OutputKeptIndices(api, ctx, boxes.shape[0], [&](ScratchAllocator& scratch, int64_t* keep, int64_t* kept) {
    return ForFloatStorage(boxes.type, [&](auto type) {
      using T = decltype(type);
      return cpu::NmsRotated(params_, boxes.Data<T>(), scores.Data<T>(), idxs.present ? idxs.Data<int64_t>() : nullptr,
                             boxes.shape[0], keep, kept, scratch, OrtTaskRunner(api, ctx));
    });
  });
}

Status NmsRotatedOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 0); }

Status MulticlassNmsRotatedOp::Create(const Attrs& attrs, std::unique_ptr<MulticlassNmsRotatedOp>* op) {
  MulticlassNmsRotatedParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMulticlassNmsRotatedParams(attrs.iou_threshold, attrs.score_threshold, &p));
  *op = std::make_unique<MulticlassNmsRotatedOp>(p);
  return Status::Ok();
}

Status MulticlassNmsRotatedOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes,
                                       InputTensor* scores) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  return CheckMulticlassNmsShapes(boxes->shape, scores->shape, 5);
}

Status MulticlassNmsRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  const int64_t batch = boxes.shape[0], n = boxes.shape[1], classes = scores.shape[1];
  return OutputSelectedRows(api, ctx, batch, classes, n,
                            [&](ScratchAllocator& scratch, int32_t* kept_boxes, int64_t* kept_counts) {
    return ForFloatStorage(boxes.type, [&](auto type) {
      using T = decltype(type);
      return cpu::MulticlassNmsRotated(params_, boxes.Data<T>(), scores.Data<T>(), batch, classes, n, kept_boxes,
                                       kept_counts, scratch, OrtTaskRunner(api, ctx));
    });
  });
}

Status MulticlassNmsRotatedOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 3); }

}  // namespace opbridge::ort
