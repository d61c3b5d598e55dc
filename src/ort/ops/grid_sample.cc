// Grid sampler ORT glue: mmcv::grid_sampler, mmdeploy::grid_sampler and opbridge::GridSample.
#include "ort/ops/grid_sample.h"

#include <memory>

#include "kernels/cpu/grid_sample.h"

namespace opbridge::ort {

const OpSchema& GridSampleOp::Schema() {
  static const OpSchema schema{
      {{"input", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false},
       {"grid", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {{"output", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, false}},
      {IntAttr("interpolation_mode", 0), IntAttr("padding_mode", 0), IntAttr("align_corners", 0)}};
  return schema;
}

Status GridSampleOp::Create(const OrtApi& api, const OrtKernelInfo* info,
                            std::unique_ptr<GridSampleOp>* op) {
  AttrReader attrs(api, info, Schema().attrs);
  int64_t interpolation = 0, padding = 0, align_corners = 0;
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("interpolation_mode", &interpolation));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("padding_mode", &padding));
  OPBRIDGE_RETURN_IF_ERROR(attrs.Int("align_corners", &align_corners));
  GridSampleParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeGridSampleParams(interpolation, padding, align_corners, &p));
  *op = std::make_unique<GridSampleOp>(p);
  return Status::Ok();
}

Status GridSampleOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* grid,
                             float** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, grid));
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleShapes(input->shape, grid->shape));
  const Shape out_shape = GridSampleOutputShape(input->shape, grid->shape);
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &data));
  *output = NumElements(out_shape) == 0 ? nullptr : static_cast<float*>(data);
  return Status::Ok();
}

Status GridSampleOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, grid;
  float* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &grid, &output));
  if (output == nullptr) return Status::Ok();
  // The 1.25 MB of taps comes from the heap, not ORT's allocator: ORT's arena grows by doubling
  // regions, and a 1 MB request next to the 8 MB outputs raised the process's peak memory by
  // 20-30 MB over ORT's built-in GridSample (measured with `opbridge bench`). The heap returns
  // a block of this size to the system when it is freed.
  std::unique_ptr<int32_t[]> taps(new int32_t[cpu::GridSampleScratchBytes() / sizeof(int32_t)]);
  return cpu::GridSample(params_, input.Data<float>(), input.shape[0], input.shape[1],
                         input.shape[2], input.shape[3], grid.Data<float>(), grid.shape[1],
                         grid.shape[2], output, taps.get(), OrtTaskRunner(api, ctx));
}

Status GridSampleOp::InferShape(const ShapeInference& infer) {
  InferredShape input, grid;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &grid));
  const bool in4 = input.dims.size() == 4, grid4 = grid.dims.size() == 4;
  InferredShape out;
  out.dims = {in4 ? input.dims[0] : -1, in4 ? input.dims[1] : -1, grid4 ? grid.dims[1] : -1,
              grid4 ? grid.dims[2] : -1};
  out.symbols = {in4 ? input.symbols[0] : "", in4 ? input.symbols[1] : "",
                 grid4 ? grid.symbols[1] : "", grid4 ? grid.symbols[2] : ""};
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, out);
}

}  // namespace opbridge::ort
