// Launch helpers for the CUDA kernels (.cu files only).
#pragma once

#include <cuda_runtime.h>

#include <stdint.h>

#include <atomic>

#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// A Status from a CUDA call's result: ok, or an error naming `what` and CUDA's message.
Status CudaError(cudaError_t error, const char* what);

// The error when the caller's device scratch allocator cannot give `bytes` bytes.
Status OutOfScratch(size_t bytes);

// Clears this runtime's error state. A failed CUDA call leaves its error to be returned again by the
// next cudaGetLastError, which would report it against a later, good launch: every launch function
// calls this first, so that what LaunchStatus reports is its own. (A sticky error, a kernel's fault,
// cannot be cleared: the context is unusable, and every later call reports it.)
void ClearStaleError();

// After a launch on `stream`: the launch's error (a bad configuration, a missing kernel image for
// this GPU), naming `kernel`. With OPBRIDGE_CUDA_SYNC=1 in the environment (read once; ./run.sh
// test-gpu sets it) it also waits for the stream and reports a fault inside the kernel against it.
Status LaunchStatus(const char* kernel, Stream stream);

// What the launch functions size grids and shared memory by: the current device, its SM count and
// the shared memory a block may opt in to. The driver is asked once per device (cached for the
// process: the figures are the hardware's), not on every call.
struct DeviceFigures {
  int device = 0;
  int sms = 0;
  int shared_optin = 0;
};
Status CurrentDeviceFigures(DeviceFigures* figures);

// Runs a per-device set-up (a kernel's shared memory opt-in, cudaFuncSetAttribute) once per device
// of the process, for devices 0-63 (any other: every call). A set-up that fails is tried again by the
// next call; two threads may both run it once, which is harmless for a set-up that writes one value.
class OncePerDevice {
 public:
  template <class SetUp>
  Status Run(int device, const SetUp& set_up) {
    const uint64_t bit = device >= 0 && device < 64 ? uint64_t{1} << device : 0;
    if (bit != 0 && (done_.load(std::memory_order_acquire) & bit) != 0) return Status::Ok();
    OPBRIDGE_RETURN_IF_ERROR(set_up());
    done_.fetch_or(bit, std::memory_order_release);
    return Status::Ok();
  }

 private:
  std::atomic<uint64_t> done_{0};
};

// Threads per block of the element-wise kernels. Every output element is computed by one thread
// from the element's index alone, so results do not depend on this or on the grid size.
constexpr int kThreads = 256;
// Blocks of kThreads per SM for a __launch_bounds__ that caps a kernel's registers: `wanted`, or on a
// GPU whose SM holds fewer threads than that (1,024 on Turing, sm_75; 1,536 or 2,048 from sm_80 on)
// as many as fit, which ptxas otherwise refuses ("threads per SM out of range"). __CUDA_ARCH__ is
// the architecture being compiled, so each of a release build's architectures gets its own.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define OPBRIDGE_BLOCKS_PER_SM(wanted) ((wanted) * kThreads <= 1024 ? (wanted) : 1024 / kThreads)
#else
#define OPBRIDGE_BLOCKS_PER_SM(wanted) (wanted)
#endif
// Blocks for `count` elements, one element per thread, capped: the kernels loop over the rest
// (grid-stride), so any count fits CUDA's grid limits.
inline unsigned int BlocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > (int64_t{1} << 20) ? (int64_t{1} << 20) : blocks));
}

// Whether `count` elements can be indexed with 32-bit arithmetic in a grid-stride loop (the index
// plus the grid's thread count stays below 2^31). Kernels take the index type as a template
// parameter and the launch functions pick int32_t when this holds: 64-bit division and modulo are
// emulated on the GPU (dozens of instructions each), 32-bit ones are a few.
inline bool FitsInt32(int64_t count) { return count <= (int64_t{1} << 31) - (int64_t{1} << 20) * kThreads - 1; }

// for (Index i = first index of this thread; i < count; i += all threads) — the grid-stride loop.
#define OPBRIDGE_CUDA_FOR(Index, i, count)                                                        \
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + threadIdx.x; \
       i < (count); i += static_cast<Index>(blockDim.x) * static_cast<Index>(gridDim.x))

}  // namespace opbridge::cuda
