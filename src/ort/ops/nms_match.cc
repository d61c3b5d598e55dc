// NMSMatch ORT glue: opbridge::NmsMatch and mmdeploy::NMSMatch.
#include "ort/ops/nms_match.h"

#include "kernels/cpu/nms_match.h"
#include "ort/ops/nms.h"

namespace opbridge::ort {
namespace {

constexpr ONNXTensorElementDataType kInt64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;

// Reads a threshold input: one value of the op's float type, shape [1] or [].
Status ReadThreshold(const OrtApi& api, OrtKernelContext* ctx, size_t index, const char* name, float* value) {
  InputTensor t;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, index, &t));
  OPBRIDGE_RETURN_IF_ERROR(CheckThresholdShape(name, t.shape));
  return FirstFloatOf(t, value);  // of the boxes' dtype (the op's type parameter)
}

}  // namespace

Status NmsMatchOp::Create(const Attrs& attrs, std::unique_ptr<NmsMatchOp>* op) {
  *op = std::make_unique<NmsMatchOp>();
  return Status::Ok();
}

Status NmsMatchOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores,
                           NmsMatchParams* params) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, boxes));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, scores));
  OPBRIDGE_RETURN_IF_ERROR(CheckNmsMatchShapes(boxes->shape, scores->shape));
  float iou_threshold = 0.f, score_threshold = 0.f;
  OPBRIDGE_RETURN_IF_ERROR(ReadThreshold(api, ctx, 2, "iou_threshold", &iou_threshold));
  OPBRIDGE_RETURN_IF_ERROR(ReadThreshold(api, ctx, 3, "score_threshold", &score_threshold));
  return MakeNmsMatchParams(iou_threshold, score_threshold, params);
}

Status NmsMatchOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor boxes, scores;
  NmsMatchParams params;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &boxes, &scores, &params));
  const int64_t batch = boxes.shape[0], n = boxes.shape[1], classes = scores.shape[1];
  void* out = nullptr;
  // No boxes or no problems: no pairs, and no bookkeeping for up to 2^31 - 1 empty problems.
  if (batch * classes * n == 0) return AllocateOutput(api, ctx, 0, {0, 4}, &out);
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  // Room for every box of every problem to be suppressed: a problem reports fewer than n pairs.
  const size_t bytes = ArenaBytes<int32_t>(2 * batch * classes * n) + ArenaBytes<int64_t>(batch * classes);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int32_t* pairs = arena.Take<int32_t>(2 * batch * classes * n);
  int64_t* pair_counts = arena.Take<int64_t>(batch * classes);
  OPBRIDGE_RETURN_IF_ERROR(ForFloatStorage(boxes.type, [&](auto type) {
    using T = decltype(type);
    return cpu::NmsMatch(params, boxes.Data<T>(), scores.Data<T>(), batch, classes, n, pairs, pair_counts, scratch,
                         OrtTaskRunner(api, ctx));
  }));
  int64_t rows = 0;
  for (int64_t bc = 0; bc < batch * classes; ++bc) rows += pair_counts[bc];
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {rows, 4}, &out));
  cpu::WriteMatchRows(pairs, pair_counts, batch, classes, n, static_cast<int64_t*>(out));
  return Status::Ok();
}

Status NmsMatchOp::InferShape(const ShapeInference& infer) { return InferKeptRows(infer, kInt64, 4); }

}  // namespace opbridge::ort
