#include "ort/cuda_glue.h"

#include "ort/ort_util.h"

namespace opbridge::ort {

Status GetCudaContext(const OrtApi& api, OrtKernelContext* ctx, CudaContext* cuda) {
  void* stream = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetGPUComputeStream(ctx, &stream)));
  if (stream == nullptr) {
    return Status::Error("ONNX Runtime gave the node no CUDA compute stream; the CUDA kernel launches only on "
                         "the session's stream");
  }
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

CudaScratchAllocator::~CudaScratchAllocator() {
  if (allocator_ != nullptr) api_.ReleaseAllocator(allocator_);
  if (info_ != nullptr) api_.ReleaseMemoryInfo(info_);
}

Status CudaScratchAllocator::Open() {
  if (allocator_ != nullptr) return Status::Ok();
  OPBRIDGE_RETURN_IF_ERROR(
      FromOrtStatus(api_, api_.CreateMemoryInfo("Cuda", OrtArenaAllocator, device_, OrtMemTypeDefault, &info_)));
  return FromOrtStatus(api_, api_.KernelContext_GetAllocator(ctx_, info_, &allocator_));
}

void* CudaScratchAllocator::Allocate(size_t bytes) {
  void* probe = nullptr;
  if (OrtStatus* status = api_.AllocatorAlloc(allocator_, bytes, &probe)) {
    api_.ReleaseStatus(status);
    return nullptr;  // the caller reports "could not allocate"
  }
  if (OrtStatus* status = api_.AllocatorFree(allocator_, probe)) api_.ReleaseStatus(status);
  void* data = nullptr;
  if (OrtStatus* status = api_.KernelContext_GetScratchBuffer(ctx_, info_, bytes, &data)) {
    api_.ReleaseStatus(status);
    return nullptr;
  }
  return data;
}

void CudaScratchAllocator::Free(void* data) {
  if (OrtStatus* status = api_.AllocatorFree(allocator_, data)) api_.ReleaseStatus(status);
}

Status CudaCompute::Open() {
  OPBRIDGE_RETURN_IF_ERROR(GetCudaContext(api_, ctx_, &context_));
  scratch_.emplace(api_, ctx_, context_.device);
  return scratch_->Open();
}

}  // namespace opbridge::ort
