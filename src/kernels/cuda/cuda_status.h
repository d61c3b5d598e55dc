// What every CUDA kernel's launch function shares, for callers compiled without CUDA headers (the
// ORT glue today, TensorRT plugins later): the stream type, how CUDA failures become a Status, the
// device, and whether this machine's driver can run the kernels at all.
//
// Every launch function takes raw device pointers, shapes, params and the stream to launch on, and
// returns a Status: an error names the kernel and CUDA's message. Launches are asynchronous: nothing
// synchronizes the stream unless the host needs a count the GPU computes (the NMS family's output
// sizes, through CopyCountToHost; the manifest's cuda_synchronizes says which ops, and when), or
// OPBRIDGE_CUDA_SYNC=1 asks for a check after every launch (launch.cuh).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>

#include "core/status.h"

struct CUstream_st;

namespace opbridge::cuda {

using Stream = CUstream_st*;  // cudaStream_t

// Makes `device` the current device of this library's CUDA runtime on the calling thread, if it is
// not already. The library links the CUDA runtime statically, so the runtime ORT uses has its own
// current device: each Compute makes ours the device of its tensors before launching. It calls
// cudaSetDevice only when the device differs: cudaSetDevice binds the thread to the device's
// primary context, which would replace a context the host application made current itself.
Status SetDevice(int device);

// Copies a count the host needs (an output's size, which the GPU found) from device memory once
// `stream` has computed it, through a page-locked slot (a DMA ordered by the stream, the slots
// reused by later calls), and waits for it: one copy, one synchronization.
Status CopyCountToHost(const int64_t* device_count, int64_t* count, const char* what, Stream stream);
// The same for `number` consecutive counts (at most kMaxCountsToHost), in one copy.
constexpr int kMaxCountsToHost = 5;
Status CopyCountsToHost(const int64_t* device_counts, int64_t* counts, int number, const char* what, Stream stream);

// The CUDA version this library's (static) runtime was built as, e.g. 13000 for 13.0.
int RuntimeCudaVersion();

// The CUDA version the NVIDIA driver supports (cuDriverGetVersion, e.g. 12040 for 12.4), or 0 when no
// driver is installed (no libcuda.so.1). It loads libcuda but does not initialize it (no cuInit):
// a process that forks after loading the library keeps a usable CUDA in its children.
int DriverCudaVersion();

// Why CUDA kernels built for runtime `runtime_version` cannot run under driver `driver_version`
// (both as cudaRuntimeGetVersion / cuDriverGetVersion give them, 0 for no driver), or "" when they
// can: the driver must support the runtime's major version (CUDA's minor version compatibility).
std::string CudaTwinsBlocker(int driver_version, int runtime_version);

}  // namespace opbridge::cuda
