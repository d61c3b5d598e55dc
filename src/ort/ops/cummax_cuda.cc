// Cumulative maximum / minimum ORT glue, CUDA twin: opbridge::CumMax, opbridge::CumMin, mmcv::cummax
// and mmcv::cummin on the CUDA execution provider, with the CPU op's checks (dim against the rank,
// known on the host).
#include "kernels/cuda/cummax.h"
#include "ort/cuda_glue.h"
#include "ort/ops/cummax.h"

namespace opbridge::ort {

template <Extreme kExtreme>
Status CumExtremeOp<kExtreme>::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor input;
  void* values = nullptr;
  int64_t* indices = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &input, &values, &indices));
  if (NumElements(input.shape) == 0) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForScanType(input.type, [&](auto type) {
    using T = decltype(type);
    return cuda::CumMax(params_, input.Data<T>(), input.shape, static_cast<T*>(values), indices, cuda.scratch(),
                        cuda.stream());
  });
}

template Status CumExtremeOp<Extreme::kMax>::ComputeCuda(const OrtApi&, OrtKernelContext*) const;
template Status CumExtremeOp<Extreme::kMin>::ComputeCuda(const OrtApi&, OrtKernelContext*) const;

}  // namespace opbridge::ort
