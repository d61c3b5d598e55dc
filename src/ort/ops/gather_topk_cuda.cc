// Gather of top-k rows ORT glue, CUDA twin: opbridge::GatherTopk and mmdeploy::GatherTopk on the
// CUDA execution provider, with the CPU op's checks. The indices stay in device memory: the kernel
// checks them as it reads them and reports the first out of range; then (only then) they are copied
// to the host and checked by the CPU op's own check, for its error word for word.
#include <vector>

#include "kernels/cuda/gather_topk.h"
#include "ort/cuda_glue.h"
#include "ort/ops/gather_topk.h"

namespace opbridge::ort {

Status GatherTopkOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  Call call;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &call));
  const int64_t index_count = NumElements(call.indices.shape);
  if (index_count == 0) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForIndexType(call.indices.type, [&](auto type) {
    using Index = decltype(type);
    const Index* indices = call.indices.Data<Index>();
    int64_t first_bad = -1;
    OPBRIDGE_RETURN_IF_ERROR(cuda::GatherTopk(call.data.data, call.element_bytes, indices, call.layout, call.output,
                                              &first_bad, cuda.scratch(), cuda.stream()));
    // Rows of no elements (data's trailing dims hold a 0) launch nothing on the GPU, so no index was
    // read there: those are checked on the host.
    if (first_bad < 0 && call.layout.row > 0) return Status::Ok();
    std::vector<Index> host(static_cast<size_t>(index_count));
    OPBRIDGE_RETURN_IF_ERROR(cuda::CopyToHost(host.data(), indices, host.size() * sizeof(Index), cuda.stream(),
                                              "copying GatherTopk's indices to the host"));
    return CheckGatherTopkIndices(host.data(), call.indices.shape, call.layout.candidates, call.gathered_axis);
  });
}

}  // namespace opbridge::ort
