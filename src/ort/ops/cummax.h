// Cumulative maximum / minimum ORT glue (CPU: cummax.cc; CUDA: cummax_cuda.cc).
#pragma once

#include <memory>
#include <type_traits>

#include "core/cummax.h"
#include "ort/generated/cummax_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// One glue class per direction (the identity says which, the node has only `dim`).
template <Extreme kExtreme>
class CumExtremeOp {
 public:
  // Generated from the manifest (the two are the same: one signature).
  using Attrs = std::conditional_t<kExtreme == Extreme::kMax, CumMaxAttrs, CumMinAttrs>;
  explicit CumExtremeOp(const CumMaxParams& params) : params_(params) {}
  // Checks dim against the input's rank when the session knows it.
  static Status Create(const Attrs& attrs, const OrtApi& api, const OrtKernelInfo* info,
                       std::unique_ptr<CumExtremeOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // cummax_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the input (dim checked against its rank) and both outputs.
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* input, void** values, int64_t** indices) const;

  CumMaxParams params_;
};

// Calls run(T{}) with T the element type `type` names, float, double, int32_t or int64_t: the types
// the schema takes (another is an error, which the session's type check reports first).
template <class Run>
Status ForScanType(ONNXTensorElementDataType type, const Run& run) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return run(float{});
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return run(double{});
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return run(int32_t{});
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return run(int64_t{});
    default: return CheckInputType(CumMaxAttrs::Schema(), 0, type);
  }
}

using CumMaxOp = CumExtremeOp<Extreme::kMax>;
using CumMinOp = CumExtremeOp<Extreme::kMin>;

}  // namespace opbridge::ort
