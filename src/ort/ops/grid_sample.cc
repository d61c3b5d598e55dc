// Grid sampler ORT glue: mmcv::grid_sampler, mmdeploy::grid_sampler and opbridge::GridSample.
#include "ort/ops/grid_sample.h"

#include <memory>

#include "kernels/cpu/grid_sample.h"

namespace opbridge::ort {

Status GridSampleOp::Create(const Attrs& attrs, std::unique_ptr<GridSampleOp>* op) {
  GridSampleParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeGridSampleParams(attrs.interpolation_mode, attrs.padding_mode, attrs.align_corners, &p));
  *op = std::make_unique<GridSampleOp>(p);
  return Status::Ok();
}

Status GridSampleOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, InputTensor* grid,
                             void** output) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, grid));
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleShapes(params_, input->shape, grid->shape));
  const Shape out_shape = GridSampleOutputShape(input->shape, grid->shape);
  void* data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, out_shape, &data, input->type));
  *output = NumElements(out_shape) == 0 ? nullptr : data;
  return Status::Ok();
}

Status GridSampleOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input, grid;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &grid, &output));
  if (output == nullptr) return Status::Ok();
  // The 1.25 MB of taps comes from the heap, not ORT's allocator: ORT's arena grows by doubling
  // regions, and a 1 MB request next to the 8 MB outputs raised the process's peak memory by
  // 20-30 MB over ORT's built-in GridSample (measured with `opbridge bench`). The heap returns
  // a block of this size to the system when it is freed.
  std::unique_ptr<int32_t[]> taps(new int32_t[cpu::GridSampleScratchBytes() / sizeof(int32_t)]);
  const Shape& in = input.shape;
  const Shape& g = grid.shape;
  return ForFloatStorage(input.type, [&](auto type) {
    using T = decltype(type);
    if (in.size() == 5) {
      return cpu::GridSample3d(params_, input.Data<T>(), in[0], in[1], in[2], in[3], in[4], grid.Data<T>(), g[1],
                               g[2], g[3], static_cast<T*>(output), taps.get(), OrtTaskRunner(api, ctx));
    }
    return cpu::GridSample(params_, input.Data<T>(), in[0], in[1], in[2], in[3], grid.Data<T>(), g[1], g[2],
                           static_cast<T*>(output), taps.get(), OrtTaskRunner(api, ctx));
  });
}

Status GridSampleOp::InferShape(const ShapeInference& infer) {
  InferredShape input, grid;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &grid));
  // [N, C] from the input, the spatial sizes from the grid: rank 4 (4-D input) or 5 (5-D). When
  // neither input's rank is known (ORT shows it as 0), so is not the output's: it is left to run time.
  const bool rank_known = input.dims.size() >= 4 || grid.dims.size() >= 4;
  if (!rank_known) return Status::Ok();
  const size_t rank = input.dims.size() == 5 || grid.dims.size() == 5 ? 5 : 4;
  const bool known_in = input.dims.size() == rank, known_grid = grid.dims.size() == rank;
  InferredShape out;
  out.dims = {known_in ? input.dims[0] : -1, known_in ? input.dims[1] : -1};
  out.symbols = {known_in ? input.symbols[0] : "", known_in ? input.symbols[1] : ""};
  for (size_t k = 1; k + 1 < rank; ++k) {
    out.dims.push_back(known_grid ? grid.dims[k] : -1);
    out.symbols.push_back(known_grid ? grid.symbols[k] : "");
  }
  // Of the type parameter T: the input's dtype (ORT sets it from the inputs where that is unknown).
  if (input.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return Status::Ok();
  return infer.SetOutput(0, input.type, out);
}

}  // namespace opbridge::ort
