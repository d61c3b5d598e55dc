// PackedGemm for aarch64 CPUs (see packed_gemm.h): NEON with fused multiply-adds, which every
// aarch64 CPU has, so the products are x86-64-v3's and v4's bits.
#define OPBRIDGE_PACKED_GEMM_NAME kPackedGemmAarch64
#define OPBRIDGE_PACKED_GEMM_LABEL "opbridge aarch64 (NEON, FMA), 8x8 micro-tile"
#include "kernels/cpu/packed_gemm_impl.inc"
