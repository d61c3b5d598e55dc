// Matrix inverse CPU kernel (float32, batched, row-major). Framework-free: raw pointers and sizes.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// The largest order inverted by the batched small-matrix path: matrices of order <= this are
// inverted several at a time, one per vector lane; larger ones one at a time.
constexpr int64_t kInverseLaneMaxOrder = 8;

// Inverts `batch` matrices of order m (input and output: batch x m x m, contiguous, row-major) by
// LU factorization with partial pivoting and a solve with the identity, in float32 with the
// operation order of reference LAPACK's sgetf2 + sgetrs (as torch.linalg.inv).
// info[b] is LAPACK's code for matrix b: 0, or k + 1 when pivot k of its factorization is exactly
// zero (the matrix is singular; its output then holds infinities or NaN). Every matrix is written
// whatever the info. scratch: per-task working copies of the matrices of order > 8.
Status Inverse(const float* input, int64_t batch, int64_t m, float* output, int32_t* info, ScratchAllocator& scratch,
               const TaskRunner& runner);

}  // namespace opbridge::cpu
