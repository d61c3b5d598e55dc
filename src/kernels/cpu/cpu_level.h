// The x86-64 level of the CPU we run on, for code built once per level and chosen at run time
// (PackedGemm; the benchmarks' Eigen GEMM): 4 with AVX-512 (F, BW, VL, DQ), 3 with AVX2 and FMA,
// else 2 (SSE4.2, the oldest level the library is built for).
#pragma once

namespace opbridge::cpu {

inline int X86_64Level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return 4;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 3;
  return 2;
}

}  // namespace opbridge::cpu
