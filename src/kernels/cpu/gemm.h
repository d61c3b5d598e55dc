// The single-precision matrix product the kernels use: C = A * B (+ C when accumulate), all
// row-major. Single-threaded: kernels call it from their own parallel tasks (ORT's pool), so the
// GEMM library must not start threads of its own. The library is chosen in gemm.cc; see
// DEVELOPERS.md for the measurement behind the choice.
#pragma once

#include <cstdint>

namespace opbridge::cpu {

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           bool accumulate, float* c, int64_t ldc);

// The name of the implementation, for benchmark reports.
const char* SgemmLibrary();

}  // namespace opbridge::cpu
