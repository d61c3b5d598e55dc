#include "kernels/cuda/cuda_status.h"

#include <cuda_runtime.h>

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {

Status CudaError(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Status::Ok();
  return Status::Error("CUDA error in ", what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

Status LaunchStatus(const char* kernel) { return CudaError(cudaGetLastError(), kernel); }

Status SetDevice(int device) { return CudaError(cudaSetDevice(device), "cudaSetDevice"); }

}  // namespace opbridge::cuda
