// Matrix inverse CUDA kernel (float32, batched, row-major). Framework-free: raw device pointers,
// sizes, device scratch and a stream.
#pragma once

#include <stdint.h>

#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// The largest order the kernel takes: m * (m + 1) (a matrix's padded elements) fits 32 bits.
constexpr int64_t kInverseMaxOrder = 46340;

// cpu::Inverse's outputs bit for bit (the same chain of float operations per element): `batch`
// matrices of order m, input and output batch x m x m in device memory; info[b] (device memory) is
// LAPACK's code of matrix b, 0 or k + 1 for a zero pivot at step k. nan_if_singular (the op's
// check_errors): a singular matrix's inverse is all NaN instead of the CPU kernel's inf or NaN, the
// defined result where the CPU op reports an error (nothing waits for the GPU to report it).
// scratch: working memory for orders too large for shared memory. An order above kInverseMaxOrder is
// an error.
Status Inverse(const float* input, int64_t batch, int64_t m, float* output, int32_t* info, bool nan_if_singular,
               ScratchAllocator& scratch, Stream stream);

}  // namespace opbridge::cuda
