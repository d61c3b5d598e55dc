// Sgemm: Eigen's matrix product, compiled for three x86-64 levels and chosen when first called.
//
// Why Eigen (measured on the development machine, single thread, GFLOP/s at the dcn.* GEMM shapes;
// DEVELOPERS.md has the table): oneDNN's sgemm was fastest (about 220) but Debian ships it only
// as a shared library pulling in libgomp and libOpenCL, and it starts OpenMP threads unless told
// not to. Debian's OpenBLAS 0.3.21 and BLIS 0.9 do not recognise the CPU and fall back to slow
// code (about 117 and 37) unless environment variables force a code path. Eigen is header-only
// (no runtime dependency, no threads) and, built for AVX-512 (x86-64-v4), reached 180-220 on
// blocks of up to 2048 columns, which is how the kernels call it. A build for one instruction set
// would either exclude older CPUs or give up most of that speed (about 45 at x86-64-v2), hence
// the three builds and the choice at run time.
#include "kernels/cpu/gemm.h"

namespace opbridge::cpu {
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
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return {detail::SgemmX86_64_v4, "Eigen 3.4, x86-64-v4 (AVX-512)"};
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {detail::SgemmX86_64_v3, "Eigen 3.4, x86-64-v3 (AVX2, FMA)"};
  }
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

}  // namespace opbridge::cpu
