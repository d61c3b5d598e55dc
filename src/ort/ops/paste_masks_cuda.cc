// Mask pasting ORT glue, CUDA twin: opbridge::PasteMasks on the CUDA execution provider, with the
// CPU op's checks; image_size is read on the host (it sizes the output). The kernel gives the CPU
// kernel's bits.
#include "kernels/cuda/paste_masks.h"
#include "ort/cuda_glue.h"
#include "ort/ops/paste_masks.h"

namespace opbridge::ort {

Status PasteMasksOp::ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const {
  InputTensor masks, boxes;
  const int64_t* size = nullptr;
  void* output = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Prepare(api, ctx, &masks, &boxes, &size, &output));
  if (output == nullptr) return Status::Ok();
  CudaCompute cuda(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(cuda.Open());
  return ForFloatStorage(masks.type, [&](auto type) {
    using T = decltype(type);
    return cuda::PasteMasks(masks.Data<T>(), masks.shape[0], masks.shape[2], boxes.Data<T>(), size[0], size[1],
                            params_.padding, static_cast<T*>(output), cuda.scratch(), cuda.stream());
  });
}

}  // namespace opbridge::ort
