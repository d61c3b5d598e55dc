// What the CPU we run on offers the kernels' vector code, and the attributes that build a
// function once per level.
//
// x86-64: code is built for x86-64-v2 (SSE4.2, the oldest level the library supports) and, where
// its speed depends on wider vectors, again for v3 (AVX2, FMA) and v4 (AVX-512), chosen at run
// time: by X86_64Level() (PackedGemm, the attention softmax, the grid sampler's gathers, the
// benchmarks' Eigen GEMM) or by the loader for the target_clones functions below.
// aarch64: one build. NEON and fused multiply-adds are in every aarch64 CPU, so there is nothing to
// choose; the kernels whose speed depends on intrinsics have NEON paths (PackedGemm, FilterAbove),
// the rest are plain loops the compiler vectorizes.
#pragma once

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "opbridge's CPU kernels are built for x86-64 and aarch64"
#endif

namespace opbridge::cpu {

#if defined(__x86_64__)

// 4 with AVX-512 (F, BW, VL, DQ), 3 with AVX2 and FMA, else 2.
inline int X86_64Level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return 4;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 3;
  return 2;
}

// Whether the kernels built for this CPU fuse multiply-adds (x86-64-v3 and v4), which decides the
// bits of the products and of the attention's exp (see packed_gemm.h, exp_polynomial.h).
inline bool CpuKernelsFuseMultiplyAdds() { return X86_64Level() >= 3; }

// The function built for x86-64-v3 and the baseline, or for v4, v3 and the baseline.
#define OPBRIDGE_CLONES_X86_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
#define OPBRIDGE_CLONES_X86_V4_V3 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

#else  // aarch64

inline bool CpuKernelsFuseMultiplyAdds() { return true; }

#define OPBRIDGE_CLONES_X86_V3
#define OPBRIDGE_CLONES_X86_V4_V3

#endif

}  // namespace opbridge::cpu
