// The CUDA glue against a fake ORT (no GPU needed): where a CUDA twin's device scratch comes from,
// and what a kernel context without a compute stream gives.
#include "ort/cuda_glue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace opbridge {
namespace {

// What the fake ORT was asked, in order.
struct Calls {
  std::vector<std::string> log;
  bool out_of_memory = false;  // AllocatorAlloc fails
  void* stream = nullptr;      // what KernelContext_GetGPUComputeStream gives
};
Calls g_calls;

struct FakeStatus {
  std::string message;
};
struct FakeMemoryInfo {
  std::string name;
  int id;
};

alignas(64) char g_probe_block[64];
alignas(64) char g_stream_block[64];
OrtAllocator g_allocator{};

OrtStatus* ORT_API_CALL CreateStatus(OrtErrorCode, const char* message) noexcept {
  return reinterpret_cast<OrtStatus*>(new FakeStatus{message});
}
const char* ORT_API_CALL GetErrorMessage(const OrtStatus* status) noexcept {
  return reinterpret_cast<const FakeStatus*>(status)->message.c_str();
}
void ORT_API_CALL ReleaseStatus(OrtStatus* status) noexcept { delete reinterpret_cast<FakeStatus*>(status); }

OrtStatus* ORT_API_CALL CreateMemoryInfo(const char* name, OrtAllocatorType, int id, OrtMemType,
                                         OrtMemoryInfo** out) noexcept {
  g_calls.log.push_back("CreateMemoryInfo " + std::string(name) + " " + std::to_string(id));
  *out = reinterpret_cast<OrtMemoryInfo*>(new FakeMemoryInfo{name, id});
  return nullptr;
}
void ORT_API_CALL ReleaseMemoryInfo(OrtMemoryInfo* info) noexcept { delete reinterpret_cast<FakeMemoryInfo*>(info); }

OrtStatus* ORT_API_CALL GetAllocator(const OrtKernelContext*, const OrtMemoryInfo* info, OrtAllocator** out) noexcept {
  g_calls.log.push_back("KernelContext_GetAllocator " + reinterpret_cast<const FakeMemoryInfo*>(info)->name);
  *out = &g_allocator;
  return nullptr;
}
void ORT_API_CALL ReleaseAllocator(OrtAllocator*) noexcept { g_calls.log.push_back("ReleaseAllocator"); }

OrtStatus* ORT_API_CALL AllocatorAlloc(OrtAllocator*, size_t size, void** out) noexcept {
  g_calls.log.push_back("AllocatorAlloc " + std::to_string(size));
  if (g_calls.out_of_memory) return CreateStatus(ORT_RUNTIME_EXCEPTION, "Failed to allocate memory");
  *out = g_probe_block;
  return nullptr;
}
OrtStatus* ORT_API_CALL AllocatorFree(OrtAllocator*, void* p) noexcept {
  g_calls.log.push_back(p == g_probe_block ? "AllocatorFree probe" : p == g_stream_block ? "AllocatorFree block"
                                                                                         : "AllocatorFree ?");
  return nullptr;
}
OrtStatus* ORT_API_CALL GetScratchBuffer(const OrtKernelContext*, const OrtMemoryInfo* info, size_t size,
                                         void** out) noexcept {
  const auto* i = reinterpret_cast<const FakeMemoryInfo*>(info);
  g_calls.log.push_back("KernelContext_GetScratchBuffer " + i->name + " " + std::to_string(i->id) + " " +
                        std::to_string(size));
  *out = g_stream_block;
  return nullptr;
}
OrtStatus* ORT_API_CALL GetGpuComputeStream(const OrtKernelContext*, void** out) noexcept {
  *out = g_calls.stream;
  return nullptr;
}

OrtApi FakeApi() {
  OrtApi api{};
  api.CreateStatus = &CreateStatus;
  api.GetErrorMessage = &GetErrorMessage;
  api.ReleaseStatus = &ReleaseStatus;
  api.CreateMemoryInfo = &CreateMemoryInfo;
  api.ReleaseMemoryInfo = &ReleaseMemoryInfo;
  api.KernelContext_GetAllocator = &GetAllocator;
  api.ReleaseAllocator = &ReleaseAllocator;
  api.AllocatorAlloc = &AllocatorAlloc;
  api.AllocatorFree = &AllocatorFree;
  api.KernelContext_GetScratchBuffer = &GetScratchBuffer;
  api.KernelContext_GetGPUComputeStream = &GetGpuComputeStream;
  return api;
}

OrtKernelContext* const kContext = reinterpret_cast<OrtKernelContext*>(g_stream_block + 1);

TEST(CudaScratchAllocator, TakesItsBlocksOnTheComputeStream) {
  // AllocatorAlloc's blocks belong to no stream: freed while the kernels are queued, ORT's arena could
  // hand them to a concurrent Run's stream at once. GetScratchBuffer allocates on the node's stream;
  // the probe before it makes a failure a status (GetScratchBuffer throws).
  g_calls = Calls{};
  const OrtApi api = FakeApi();
  {
    ort::CudaScratchAllocator scratch(api, kContext, 1);
    ASSERT_TRUE(scratch.Open().ok());
    void* block = scratch.Allocate(4096);
    EXPECT_EQ(block, g_stream_block);
    scratch.Free(block);
  }
  const std::vector<std::string> expected = {
      "CreateMemoryInfo Cuda 1", "KernelContext_GetAllocator Cuda", "AllocatorAlloc 4096", "AllocatorFree probe",
      "KernelContext_GetScratchBuffer Cuda 1 4096", "AllocatorFree block", "ReleaseAllocator"};
  EXPECT_EQ(g_calls.log, expected);
}

TEST(CudaScratchAllocator, OutOfMemoryIsANullBlockNotACallThatThrows) {
  g_calls = Calls{};
  g_calls.out_of_memory = true;
  const OrtApi api = FakeApi();
  {
    ort::CudaScratchAllocator scratch(api, kContext, 0);
    ASSERT_TRUE(scratch.Open().ok());
    EXPECT_EQ(scratch.Allocate(1 << 30), nullptr);
  }
  for (const std::string& call : g_calls.log) EXPECT_EQ(call.find("GetScratchBuffer"), std::string::npos) << call;
}

TEST(CudaContext, ANullComputeStreamIsAnError) {
  // Launches on a null stream would go to this library's own runtime's default stream, unordered with
  // ORT's work on the node's tensors.
  g_calls = Calls{};
  const OrtApi api = FakeApi();
  ort::CudaContext cuda;
  const Status status = ort::GetCudaContext(api, kContext, &cuda);
  EXPECT_EQ(status.message(),
            "ONNX Runtime gave the node no CUDA compute stream; the CUDA kernel launches only on the session's stream");
}

TEST(CudaTwins, RegisteredOnlyWhereTheDriverRunsTheRuntime) {
  EXPECT_EQ(cuda::CudaTwinsBlocker(13000, 13000), "");
  EXPECT_EQ(cuda::CudaTwinsBlocker(13020, 13000), "");  // minor version compatibility
  EXPECT_EQ(cuda::CudaTwinsBlocker(14000, 13000), "");
  EXPECT_EQ(cuda::CudaTwinsBlocker(12040, 13000),
            "the NVIDIA driver supports CUDA 12.4, older than the CUDA 13.0 the kernels were built with: update the "
            "driver to one for CUDA 13.x");
  EXPECT_EQ(cuda::CudaTwinsBlocker(0, 13000), "no NVIDIA driver on this machine (libcuda.so.1 not found)");
  EXPECT_EQ(cuda::RuntimeCudaVersion() / 1000, 13);
}

}  // namespace
}  // namespace opbridge
