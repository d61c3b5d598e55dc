// Axis-aligned NMS ORT glue: opbridge::Nms, opbridge::BatchedNms, opbridge::MulticlassNms and
// mmcv::NonMaxSuppression.
#include "ort/ops/nms.h"

#include "kernels/cpu/nms.h"

namespace opbridge::ort {
namespace {

constexpr ONNXTensorElementDataType kInt64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;

template <class Op>
Status CreateNms(const typename Op::Attrs& attrs, std::unique_ptr<Op>* op) {
  NmsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeNmsParams(attrs.iou_threshold, attrs.offset, &p));
  *op = std::make_unique<Op>(p);
  return Status::Ok();
}

}  // namespace

Status InferKeptRows(const ShapeInference& infer, ONNXTensorElementDataType type, int64_t columns) {
  InferredShape out;
  out.dims = {-1};
  out.symbols = {ShapeInference::NewSymbol("kept")};
  if (columns > 0) {
    out.dims.push_back(columns);
    out.symbols.push_back("");
  }
  return infer.SetOutput(0, type, out);
}

Status NmsOp::Create(const Attrs& attrs, std::unique_ptr<NmsOp>* op) {
  return CreateNms(attrs, op);
}

Status BatchedNmsOp::Create(const Attrs& attrs, std::unique_ptr<BatchedNmsOp>* op) {
  return CreateNms(attrs, op);
}

Status NmsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const { return Run(api, ctx, false); }

Status BatchedNmsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const { return Run(api, ctx, true); }

Status NmsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, bool with_categories, InputTensor* boxes,
                      InputTensor* scores, InputTensor* idxs) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  if (with_categories) OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, idxs));
  return CheckNmsShapes(boxes->shape, scores->shape, with_categories ? &idxs->shape : nullptr);
}

Status NmsOp::Run(const OrtApi& api, OrtKernelContext* ctx, bool with_categories) const {
  InputTensor boxes, scores, idxs;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, with_categories, &boxes, &scores, &idxs));
  return OutputKeptIndices(api, ctx, boxes.shape[0], [&](ScratchAllocator& scratch, int64_t* keep, int64_t* kept) {
    return ForFloatStorage(boxes.type, [&](auto type) {
      using T = decltype(type);
      return cpu::Nms(params_, boxes.Data<T>(), scores.Data<T>(), with_categories ? idxs.Data<int64_t>() : nullptr,
                      boxes.shape[0], keep, kept, scratch, OrtTaskRunner(api, ctx));
    });
  });
}

Status NmsOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 0); }

Status MulticlassNmsOp::Create(const Attrs& attrs, std::unique_ptr<MulticlassNmsOp>* op) {
  MulticlassNmsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMulticlassNmsParams(attrs.iou_threshold, attrs.score_threshold,
                                                   attrs.max_output_boxes_per_class, &p));
  *op = std::make_unique<MulticlassNmsOp>(p);
  return Status::Ok();
}

Status MulticlassNmsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  return CheckMulticlassNmsShapes(boxes->shape, scores->shape, 4);
}

Status MulticlassNmsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores));
  const int64_t batch = boxes.shape[0], n = boxes.shape[1], classes = scores.shape[1];
  const int64_t cap = cpu::MulticlassNmsCapacity(params_, n);
  return OutputSelectedRows(api, ctx, batch, classes, cap,
                            [&](ScratchAllocator& scratch, int32_t* kept_boxes, int64_t* kept_counts) {
    return ForFloatStorage(boxes.type, [&](auto type) {
      using T = decltype(type);
      return cpu::MulticlassNms(params_, boxes.Data<T>(), scores.Data<T>(), batch, classes, n, kept_boxes, kept_counts,
                                scratch, OrtTaskRunner(api, ctx));
    });
  });
}

Status MulticlassNmsOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 3); }

}  // namespace opbridge::ort
