// Sgemm: Eigen's matrix product, compiled for three x86-64 levels and chosen when first called
// (a build for one level would give up most of the speed: about 45 GFLOP/s at x86-64-v2 against
// 210 at v4 on the development machine).
#include "eigen_sgemm/eigen_sgemm.h"

#include "kernels/cpu/cpu_level.h"

namespace opbridge::bench {
namespace detail {
void SgemmX86_64_v2(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, bool, float*, int64_t);
void SgemmX86_64_v3(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, bool, float*, int64_t);
void SgemmX86_64_v4(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, bool, float*, int64_t);
}  // namespace detail

namespace {

using SgemmFn = void (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, bool, float*,
                         int64_t);

struct Choice {
  SgemmFn fn;
  const char* name;
};

Choice Choose() {
  const int level = cpu::X86_64Level();
  if (level >= 4) return {detail::SgemmX86_64_v4, "Eigen 3.4, x86-64-v4 (AVX-512)"};
  if (level >= 3) return {detail::SgemmX86_64_v3, "Eigen 3.4, x86-64-v3 (AVX2, FMA)"};
  return {detail::SgemmX86_64_v2, "Eigen 3.4, x86-64-v2 (SSE4.2)"};
}

const Choice& Chosen() {
  static const Choice choice = Choose();
  return choice;
}

}  // namespace

void Sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           bool accumulate, float* c, int64_t ldc) {
  Chosen().fn(m, n, k, a, lda, b, ldb, accumulate, c, ldc);
}

const char* SgemmLibrary() { return Chosen().name; }

}  // namespace opbridge::bench
