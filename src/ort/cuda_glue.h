// opbridge ORT glue: what a CUDA twin's Compute gets from ORT (built with OPBRIDGE_CUDA only).
//
// A CUDA twin launches on ORT's compute stream, takes scratch from ORT's CUDA allocator
// (OrtScratchAllocator with the device), and first makes the device of the node's tensors current
// for this library's own (static) CUDA runtime. No CUDA header is needed here: the launch
// functions of kernels/cuda/ take the stream as cuda::Stream.
#pragma once

#include <onnxruntime_c_api.h>

#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::ort {

struct CudaContext {
  cuda::Stream stream = nullptr;  // ORT's compute stream (KernelContext_GetGPUComputeStream)
  int device = 0;                 // the device the node's inputs live on
};

// The stream and the device (from the first present input in device memory), with that device
// made current (cuda::SetDevice).
Status GetCudaContext(const OrtApi& api, OrtKernelContext* ctx, CudaContext* cuda);

}  // namespace opbridge::ort
