// Cumulative maximum / minimum ORT glue: opbridge::CumMax, opbridge::CumMin, mmcv::cummax and
// mmcv::cummin.
#include "ort/ops/cummax.h"

#include "kernels/cpu/cummax.h"

namespace opbridge::ort {

template <Extreme kExtreme>
Status CumExtremeOp<kExtreme>::Create(const Attrs& attrs, const OrtApi& api, const OrtKernelInfo* info,
                                      std::unique_ptr<CumExtremeOp>* op) {
  CumMaxParams p;
  p.extreme = kExtreme;
  p.dim = attrs.dim;
  // A dim out of range fails the session when the input's rank is known; otherwise each run checks.
  int64_t rank = -1, axis = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputRankAtCreation(api, info, 0, &rank));
  if (rank >= 0) OPBRIDGE_RETURN_IF_ERROR(WrapCumMaxDim(p.dim, rank, &axis));
  *op = std::make_unique<CumExtremeOp>(p);
  return Status::Ok();
}

template <Extreme kExtreme>
Status CumExtremeOp<kExtreme>::Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, void** values,
                                       int64_t** indices) const {
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, input));
  int64_t axis = 0;
  OPBRIDGE_RETURN_IF_ERROR(WrapCumMaxDim(params_.dim, static_cast<int64_t>(input->shape.size()), &axis));
  void* index_data = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, input->shape, values));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, input->shape, &index_data));
  *indices = static_cast<int64_t*>(index_data);
  return Status::Ok();
}

template <Extreme kExtreme>
Status CumExtremeOp<kExtreme>::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  void* values = nullptr;
  int64_t* indices = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &values, &indices));
  const OrtTaskRunner runner(api, ctx);
  return ForScanType(input.type, [&](auto type) {
    using T = decltype(type);
    return cpu::CumMax(params_, input.Data<T>(), input.shape, static_cast<T*>(values), indices, runner);
  });
}

template <Extreme kExtreme>
Status CumExtremeOp<kExtreme>::InferShape(const ShapeInference& infer) {
  InferredShape input;
  OPBRIDGE_RETURN_IF_ERROR(infer.Input(0, &input));
  // ORT shows an input of unknown rank as rank 0: then only the dtypes are known (ORT sets them).
  if (input.dims.empty()) return Status::Ok();
  if (input.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    OPBRIDGE_RETURN_IF_ERROR(infer.SetOutput(0, input.type, input));
  }
  return infer.SetOutput(1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, input);
}

template class CumExtremeOp<Extreme::kMax>;
template class CumExtremeOp<Extreme::kMin>;

}  // namespace opbridge::ort
