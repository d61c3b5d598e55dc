// Sgemm: a portable blocked loop for now (the library choice is being measured).
#include "kernels/cpu/gemm.h"

#include <algorithm>

namespace opbridge::cpu {

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           bool accumulate, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (!accumulate) std::fill(ci, ci + n, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * lda + p];
      const float* bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
    }
  }
}

const char* SgemmLibrary() { return "portable loop"; }

}  // namespace opbridge::cpu
