// Launch helpers for the CUDA kernels (.cu files only).
#pragma once

#include <cuda_runtime.h>

#include <stdint.h>

#include "core/status.h"

namespace opbridge::cuda {

// A Status from a CUDA call's result: ok, or an error naming `what` and CUDA's message.
Status CudaError(cudaError_t error, const char* what);
// After a launch: the launch's error (a bad configuration, a missing kernel image for this GPU),
// or an earlier asynchronous one, naming `kernel`.
Status LaunchStatus(const char* kernel);

// Threads per block of the element-wise kernels. Every output element is computed by one thread
// from the element's index alone, so results do not depend on this or on the grid size.
constexpr int kThreads = 256;
// Blocks for `count` elements, one element per thread, capped: the kernels loop over the rest
// (grid-stride), so any count fits CUDA's grid limits.
inline unsigned int BlocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > (int64_t{1} << 20) ? (int64_t{1} << 20) : blocks));
}

// for (int64_t i = first index of this thread; i < count; i += all threads) — the grid-stride loop.
#define OPBRIDGE_CUDA_FOR(i, count)                                                                  \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (count);    \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

}  // namespace opbridge::cuda
