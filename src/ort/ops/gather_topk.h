// Gather of top-k rows ORT glue (CPU: gather_topk.cc; CUDA: gather_topk_cuda.cc).
#pragma once

#include <memory>

#include "core/gather_topk.h"
#include "ort/generated/gather_topk_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// Calls run(Index{}) with Index the type of the indices, int32_t or int64_t (the schema's two).
template <class Run>
Status ForIndexType(ONNXTensorElementDataType type, const Run& run) {
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32) return run(int32_t{});
  return run(int64_t{});
}

class GatherTopkOp {
 public:
  using Attrs = GatherTopkAttrs;  // generated from the manifest
  static Status Create(const Attrs& attrs, std::unique_ptr<GatherTopkOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // gather_topk_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // What both providers do first: the inputs (shapes checked), the layout, the allocated output
  // (its dtype checked against data's) and the element size.
  struct Call {
    InputTensor data, indices;
    GatherTopkLayout layout;
    int64_t gathered_axis = 0;
    void* output = nullptr;
    int element_bytes = 4;
  };
  Status Prepare(const OrtApi& api, OrtKernelContext* ctx, Call* call) const;
};

}  // namespace opbridge::ort
