// What every CUDA kernel's launch function shares, for callers compiled without CUDA headers (the
// ORT glue today, TensorRT plugins later): the stream type, and how CUDA failures become a Status.
//
// Every launch function takes raw device pointers, shapes, params and the stream to launch on, and
// returns a Status: an error names the kernel and CUDA's message (a launch that failed, or an
// earlier asynchronous error that CUDA reports at this call). Launches are asynchronous: nothing
// synchronizes the stream unless the output's size depends on the data (NMS copies its count).
#pragma once

#include <stdint.h>

#include "core/status.h"

struct CUstream_st;

namespace opbridge::cuda {

using Stream = CUstream_st*;  // cudaStream_t

// Makes `device` the current device of this library's CUDA runtime on the calling thread. The
// library links the CUDA runtime statically, so the runtime ORT uses has its own current device:
// each Compute sets ours to the device of its tensors before launching.
Status SetDevice(int device);

}  // namespace opbridge::cuda
