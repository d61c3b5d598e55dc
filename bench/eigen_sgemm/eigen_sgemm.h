// Eigen's single-precision matrix product, C = A * B (+ C when accumulate), all row-major,
// single-threaded: the GEMM library the kernel benchmarks hold PackedGemm (the deformable
// convolution's own product) against. Eigen was the best library for this job on the
// development machine; DEVELOPERS.md has the comparison. Not part of the library.
#pragma once

#include <cstdint>

namespace opbridge::bench {

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           bool accumulate, float* c, int64_t ldc);

// The name of the implementation, for benchmark reports.
const char* SgemmLibrary();

}  // namespace opbridge::bench
