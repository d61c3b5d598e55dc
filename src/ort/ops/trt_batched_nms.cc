// TensorRT batched NMS ORT glue: opbridge::TrtBatchedNms, opbridge::TrtBatchedRotatedNms,
// mmdeploy::TRTBatchedNMS and mmdeploy::TRTBatchedRotatedNMS.
#include "ort/ops/trt_batched_nms.h"

#include "kernels/cpu/trt_batched_nms.h"
#include "ort/op_adapter.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kInt32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
}  // namespace

Status TrtBatchedNmsOp::Create(const Attrs& attrs, std::unique_ptr<TrtBatchedNmsOp>* op) {
  TrtBatchedNmsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeTrtBatchedNmsParams(attrs.background_label_id, attrs.num_classes, attrs.topk,
                                                   attrs.keep_topk, attrs.score_threshold, attrs.iou_threshold,
                                                   attrs.is_normalized, attrs.clip_boxes, attrs.return_index,
                                                   /*rotated=*/false, &p));
  *op = std::make_unique<TrtBatchedNmsOp>(p);
  return Status::Ok();
}

Status TrtBatchedRotatedNmsOp::Create(const Attrs& attrs, std::unique_ptr<TrtBatchedRotatedNmsOp>* op) {
  TrtBatchedNmsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeTrtBatchedNmsParams(attrs.background_label_id, attrs.num_classes, attrs.topk,
                                                   attrs.keep_topk, attrs.score_threshold, attrs.iou_threshold,
                                                   attrs.is_normalized, attrs.clip_boxes, /*return_index=*/0,
                                                   /*rotated=*/true, &p));
  *op = std::make_unique<TrtBatchedRotatedNmsOp>(p);
  return Status::Ok();
}

Status TrtBatchedNmsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                                Outputs* out) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  OPBRIDGE_RETURN_IF_ERROR(CheckTrtBatchedNmsShapes(params_, boxes->shape, scores->shape));
  size_t outputs = 0;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetOutputCount(ctx, &outputs)));
  const int64_t batch = boxes->shape[0], keep = params_.keep_topk;
  void* dets = nullptr;
  void* labels = nullptr;
  void* index = nullptr;
  // Bounded by the per-call output limit (core/work_limits.h): keep_topk may be up to 2^31 - 1.
  OPBRIDGE_RETURN_IF_ERROR(
      AllocateBoundedOutput(api, ctx, 0, {batch, keep, params_.box_size() + 1}, &dets, boxes->type));
  OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 1, {batch, keep}, &labels));
  // The index is written when the node has the output (return_index as mmdeploy's exporter sets
  // it, or a third output); with return_index = 1 and no such output there is nothing to write.
  if (outputs > 2) OPBRIDGE_RETURN_IF_ERROR(AllocateBoundedOutput(api, ctx, 2, {batch, keep}, &index));
  *out = {dets, static_cast<int32_t*>(labels), static_cast<int32_t*>(index)};
  return Status::Ok();
}

Status TrtBatchedNmsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  Outputs out;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &out));
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cpu::TrtBatchedNms(params_, boxes.Data<T>(), boxes.shape[2], scores.Data<T>(), boxes.shape[0],
                              boxes.shape[1], scores.shape[2], static_cast<T*>(out.dets), out.labels, out.index, scratch,
                              OrtTaskRunner(api, ctx));
  });
}

Status TrtBatchedNmsOp::InferShapeOf(const ShapeInference& infer, int64_t box_size, bool with_index) {
  InferredShape boxes;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &boxes));
  int64_t keep = -1;
  bool has_keep = false;
  OPBRIDGE_RETURN_IF_ERROR(infer.AttrInt("keep_topk", &keep, &has_keep));
  const int64_t batch = boxes.dims.size() == 4 ? boxes.dims[0] : -1;
  const std::string batch_symbol = boxes.dims.size() == 4 ? boxes.symbols[0] : "";
  InferredShape dets, rows;
  dets.dims = {batch, has_keep ? keep : -1, box_size + 1};
  dets.symbols = {batch_symbol, "", ""};
  rows.dims = {batch, has_keep ? keep : -1};
  rows.symbols = {batch_symbol, ""};
  // dets of the boxes' dtype (left to ORT, which sets it from the inputs, where that is unknown).
  if (boxes.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, boxes.type, dets));
  OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(1, kInt32, rows));
  // The shape-inference context does not say how many outputs the node has (2, or 3 with the
  // index), and setting a third one a node lacks is an error: it is tried, and a failure means
  // the node has no such output. ORT before 1.28 does not check the index and writes past its
  // list of outputs (an abort in its debug assertion, memory corruption without): there the
  // index output's shape is left to run time.
  if (with_index && RegisteredRuntimeMinor() >= 28) (void)infer.SetOutput(2, kInt32, rows);
  return Status::Ok();
}

Status TrtBatchedNmsOp::InferShape(const ShapeInference& infer) { return InferShapeOf(infer, 4, true); }

Status TrtBatchedRotatedNmsOp::InferShape(const ShapeInference& infer) { return InferShapeOf(infer, 5, false); }

}  // namespace opbridge::ort
