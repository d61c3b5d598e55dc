// Cumulative maximum / minimum ORT glue: opbridge::CumMax, opbridge::CumMin, mmcv::cummax and
// mmcv::cummin.
#include "ort/ops/cummax.h"

#include "kernels/cpu/cummax.h"

namespace opbridge::ort {
namespace {

template <class T>
Status Run(const CumMaxParams& params, const InputTensor& input, void* values, void* indices, const TaskRunner& runner) {
  return cpu::CumMax(params, input.Data<T>(), input.shape, static_cast<T*>(values), static_cast<int64_t*>(indices),
                     runner);
}

}  // namespace

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
Status CumExtremeOp<kExtreme>::Compute(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  OPBRIDGE_RETURN_IF_ERROR(GetInput(api, ctx, 0, &input));
  int64_t axis = 0;
  OPBRIDGE_RETURN_IF_ERROR(WrapCumMaxDim(params_.dim, static_cast<int64_t>(input.shape.size()), &axis));
  void* values = nullptr;
  void* indices = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, input.shape, &values));
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 1, input.shape, &indices));
  const OrtTaskRunner runner(api, ctx);
  switch (input.type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return Run<float>(params_, input, values, indices, runner);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return Run<double>(params_, input, values, indices, runner);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return Run<int32_t>(params_, input, values, indices, runner);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return Run<int64_t>(params_, input, values, indices, runner);
    default: return CheckInputType(Attrs::Schema(), 0, input.type);  // an error: the types are checked before
  }
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
