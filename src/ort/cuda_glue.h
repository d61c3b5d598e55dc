// opbridge ORT glue: what a CUDA twin's Compute gets from ORT (built with OPBRIDGE_CUDA only).
//
// A CUDA twin launches on ORT's compute stream for the node, takes its device scratch through
// CudaScratchAllocator (tied to that stream), and first makes the device of the node's tensors current
// for this library's own (static) CUDA runtime. No CUDA header is needed here: the launch functions of
// kernels/cuda/ take the stream as cuda::Stream.
#pragma once

#include <onnxruntime_c_api.h>

#include <optional>

#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::ort {

struct CudaContext {
  cuda::Stream stream = nullptr;  // ORT's compute stream (KernelContext_GetGPUComputeStream), never null
  int device = 0;                 // the device the node's inputs live on
};

// The stream and the device (from the first present input in device memory), with that device made
// current (cuda::SetDevice). A null stream is an error: launches on it would go to this runtime's
// default stream, unordered with ORT's work on the node's inputs and outputs.
Status GetCudaContext(const OrtApi& api, OrtKernelContext* ctx, CudaContext* cuda);

// Device scratch for one Compute of a CUDA twin, from the session's CUDA allocator, tied to the node's
// compute stream. The kernels are still queued when Compute returns and frees the block: a block taken
// with AllocatorAlloc belongs to no stream, and ORT's stream-aware arena would hand it at once to
// another stream (a concurrent Run of the session, another session sharing the allocator) to be
// overwritten under the running kernel. KernelContext_GetScratchBuffer (API 18) allocates on the
// compute stream instead: the arena gives the freed block to another stream only after that stream
// has waited for ours. It throws ORT's C++ exception when the device is out of memory, which cannot
// unwind through this library (it aborted the process: DEVELOPERS.md), so each request is first made
// and returned through AllocatorAlloc, which reports a failure as a status: the block GetScratchBuffer
// then takes is one the arena already has. (Only a concurrent allocation between the two, on a device
// already full, could still reach ORT's throw.)
class CudaScratchAllocator final : public ScratchAllocator {
 public:
  CudaScratchAllocator(const OrtApi& api, OrtKernelContext* ctx, int device) : api_(api), ctx_(ctx), device_(device) {}
  ~CudaScratchAllocator() override;
  CudaScratchAllocator(const CudaScratchAllocator&) = delete;
  CudaScratchAllocator& operator=(const CudaScratchAllocator&) = delete;
  Status Open();
  void* Allocate(size_t bytes) override;  // nullptr when out of memory
  void Free(void* data) override;

 private:
  const OrtApi& api_;
  OrtKernelContext* ctx_;
  int device_;
  OrtMemoryInfo* info_ = nullptr;
  OrtAllocator* allocator_ = nullptr;
};

// What a CUDA twin's Compute opens before launches that take scratch: its context (GetCudaContext)
// and the device scratch tied to its stream.
class CudaCompute {
 public:
  CudaCompute(const OrtApi& api, OrtKernelContext* ctx) : api_(api), ctx_(ctx) {}
  Status Open();
  cuda::Stream stream() const { return context_.stream; }
  ScratchAllocator& scratch() { return *scratch_; }  // after Open

 private:
  const OrtApi& api_;
  OrtKernelContext* ctx_;
  CudaContext context_;
  std::optional<CudaScratchAllocator> scratch_;
};

}  // namespace opbridge::ort
