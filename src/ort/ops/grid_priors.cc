// Grid priors ORT glue: opbridge::GridPriors and mmdeploy::GridPriorsTRT.
#include "ort/ops/grid_priors.h"

#include "kernels/cpu/grid_priors.h"

namespace opbridge::ort {

Status GridPriorsOp::Create(const Attrs& attrs, std::unique_ptr<GridPriorsOp>* op) {
  GridPriorsParams p;
  OPBRIDGE_RETURN_IF_ERROR(MakeGridPriorsParams(attrs.stride_h, attrs.stride_w, &p));
  *op = std::make_unique<GridPriorsOp>(p);
  return Status::Ok();
}

Status GridPriorsOp::Prepare(const OrtApi& api, OrtKernelContext* ctx, Grid* grid) {
  InputTensor base, h_provider, w_provider;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &base));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 1, &h_provider));
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 2, &w_provider));
  Shape output_shape;
  OPBRIDGE_RETURN_IF_ERROR(CheckGridPriorsShapes(base.shape, h_provider.shape, w_provider.shape, &output_shape));
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, output_shape, &output));
  *grid = {base.Data<float>(), base.shape[0], h_provider.shape[0], w_provider.shape[0], static_cast<float*>(output)};
  return Status::Ok();
}

Status GridPriorsOp::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  Grid g;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &g));
  return cpu::GridPriors(g.base_anchors, g.anchors, g.height, g.width, params_, g.output, OrtTaskRunner(api, ctx));
}

Status GridPriorsOp::InferShape(const ShapeInference& infer) {
  InferredShape base, h, w;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &base));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(1, &h));
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(2, &w));
  InferredShape output;
  output.dims = {-1, 4};
  output.symbols = {"", ""};
  // The row count is known when all three sizes are (ORT shows an unknown rank as rank 0).
  if (base.dims.size() == 2 && h.dims.size() == 1 && w.dims.size() == 1 && base.dims[0] >= 0 && h.dims[0] >= 0 &&
      w.dims[0] >= 0) {
    int64_t rows = 0;
    if (CheckedNumElements({h.dims[0], w.dims[0], base.dims[0]}, &rows)) output.dims[0] = rows;
  }
  return infer.SetOutput(0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, output);
}

}  // namespace opbridge::ort
