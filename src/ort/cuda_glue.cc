#include "ort/cuda_glue.h"

#include "ort/ort_util.h"

namespace opbridge::ort {

Status GetCudaContext(const OrtApi& api, OrtKernelContext* ctx, CudaContext* cuda) {
  void* stream = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetGPUComputeStream(ctx, &stream)));
  cuda->stream = static_cast<cuda::Stream>(stream);
  size_t inputs = 0;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetInputCount(ctx, &inputs)));
  bool found = false;
  for (size_t i = 0; i < inputs && !found; ++i) {
    const OrtValue* value = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetInput(ctx, i, &value)));
    if (value == nullptr) continue;
    const OrtMemoryInfo* info = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.GetTensorMemoryInfo(value, &info)));
    OrtMemoryInfoDeviceType type = OrtMemoryInfoDeviceType_CPU;
    api.MemoryInfoGetDeviceType(info, &type);
    if (type != OrtMemoryInfoDeviceType_GPU) continue;  // an input the twin takes on the host
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.MemoryInfoGetId(info, &cuda->device)));
    found = true;
  }
  if (!found) return Status::Error("internal error: no input of the CUDA kernel is in CUDA device memory");
  return cuda::SetDevice(cuda->device);
}

}  // namespace opbridge::ort
