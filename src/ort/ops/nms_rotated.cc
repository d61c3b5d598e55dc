// Rotated NMS ORT glue: opbridge::NmsRotated, opbridge::MulticlassNmsRotated and
// mmdeploy::NMSRotated.
#include "ort/ops/nms_rotated.h"

#include "kernels/cpu/nms_rotated.h"
#include "ort/ops/nms.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
constexpr ONNXTensorElementDataType kInt64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
}  // namespace

const OpSchema& NmsRotatedOp::Schema() {
  static const OpSchema schema{{{"boxes", kFloat, false}, {"scores", kFloat, false}, {"idxs", kInt64, true}},
                               {{"keep", kInt64, false}},
                               {RequiredFloatAttr("iou_threshold"), IntAttr("clockwise", 1)}};
  return schema;
}

Status NmsRotatedOp::Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<NmsRotatedOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  float iou_threshold = 0.f;
  int64_t clockwise = 1;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Float("iou_threshold", &iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("clockwise", &clockwise));
  NmsRotatedParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeNmsRotatedParams(iou_threshold, clockwise, &p));
  *op = std::make_unique<NmsRotatedOp>(p);
  return Status::Ok();
}

Status NmsRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  InputTensor boxes, scores, idxs;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &scores));
  if (count > 2) OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &idxs));
  OPBRIDGE_RETURN_IF_ERROR(CheckNmsRotatedShapes(boxes.shape, scores.shape, idxs.present ? &idxs.shape : nullptr));
  return OutputKeptIndices(api, ctx, boxes.shape[0], [&](ScratchAllocator& scratch, int64_t* keep, int64_t* kept) {
    return cpu::NmsRotated(params_, boxes.Data<float>(), scores.Data<float>(),
                           idxs.present ? idxs.Data<int64_t>() : nullptr, boxes.shape[0], keep, kept, scratch,
                           OrtTaskRunner(api, ctx));
  });
}

Status NmsRotatedOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 0); }

const OpSchema& MulticlassNmsRotatedOp::Schema() {
  // mmdeploy's kernel reads both attributes with no default; opbridge defaults the score
  // threshold to 0.
  static const OpSchema schema{{{"boxes", kFloat, false}, {"scores", kFloat, false}},
                               {{"selected", kInt64, false}},
                               {RequiredFloatAttr("iou_threshold"), FloatAttr("score_threshold", 0.0f)}};
  return schema;
}

Status MulticlassNmsRotatedOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                                      std::unique_ptr<MulticlassNmsRotatedOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  float iou_threshold = 0.f, score_threshold = 0.f;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Float("iou_threshold", &iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Float("score_threshold", &score_threshold));
  MulticlassNmsRotatedParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeMulticlassNmsRotatedParams(iou_threshold, score_threshold, &p));
  *op = std::make_unique<MulticlassNmsRotatedOp>(p);
  return Status::Ok();
}

Status MulticlassNmsRotatedOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &scores));
  OPBRIDGE_RETURN_IF_ERROR(CheckMulticlassNmsShapes(boxes.shape, scores.shape, 5));
  const int64_t batch = boxes.shape[0], n = boxes.shape[1], classes = scores.shape[1];
  return OutputSelectedRows(api, ctx, batch, classes, n,
                            [&](ScratchAllocator& scratch, int32_t* kept_boxes, int64_t* kept_counts) {
    return cpu::MulticlassNmsRotated(params_, boxes.Data<float>(), scores.Data<float>(), batch, classes, n,
                                     kept_boxes, kept_counts, scratch, OrtTaskRunner(api, ctx));
  });
}

Status MulticlassNmsRotatedOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 3); }

}  // namespace opbridge::ort
