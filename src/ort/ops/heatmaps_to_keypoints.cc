// Keypoint decoding ORT glue: opbridge::HeatmapsToKeypoints.
#include "ort/ops/heatmaps_to_keypoints.h"

#include "kernels/cpu/heatmaps_to_keypoints.h"

namespace opbridge::ort {
namespace {
constexpr ONNXTensorElementDataType kFloat = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}  // namespace

Status HeatmapsToKeypointsOp::Create(const Attrs& attrs, std::unique_ptr<HeatmapsToKeypointsOp>* op) {
  *op = std::make_unique<HeatmapsToKeypointsOp>();
  return Status::Ok();
}

Status HeatmapsToKeypointsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* maps, InputTensor* rois,
                                      float** xy, float** scores) {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, maps));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, rois));
  OPBRIDGE_RETURN_IF_ERROR(CheckHeatmapsToKeypointsShapes(maps->shape, rois->shape));
  const int64_t r = maps->shape[0], k = maps->shape[1];
  void* xy_out = nullptr;
  void* scores_out = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {r, k, 3}, &xy_out));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, {r, k}, &scores_out));
  *xy = r * k == 0 ? nullptr : static_cast<float*>(xy_out);
  *scores = r * k == 0 ? nullptr : static_cast<float*>(scores_out);
  return Status::Ok();
}

Status HeatmapsToKeypointsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor maps, rois;
  float *xy = nullptr, *scores = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &maps, &rois, &xy, &scores));
  if (xy == nullptr) return Status::Ok();
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  return cpu::HeatmapsToKeypoints(maps.Data<float>(), maps.shape[0], maps.shape[1], maps.shape[2], maps.shape[3],
                                  rois.Data<float>(), xy, scores, scratch, OrtTaskRunner(api, ctx));
}

Status HeatmapsToKeypointsOp::InferShape(const ShapeInference& infer) {
  InferredShape maps;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &maps));
  const bool known = maps.dims.size() == 4;
  InferredShape xy, scores;
  xy.dims = {known ? maps.dims[0] : -1, known ? maps.dims[1] : -1, 3};
  xy.symbols = {known ? maps.symbols[0] : "", known ? maps.symbols[1] : "", ""};
  scores.dims = {xy.dims[0], xy.dims[1]};
  scores.symbols = {xy.symbols[0], xy.symbols[1]};
  OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, kFloat, xy));
  return infer.SetOutput(1, kFloat, scores);
}

}  // namespace opbridge::ort
