// PackedGemm for x86-64-v3 CPUs (see packed_gemm.h). Compiled with -march=x86-64-v3.
#define OPBRIDGE_PACKED_GEMM_NAME kPackedGemmX86_64_v3
#define OPBRIDGE_PACKED_GEMM_LABEL "opbridge x86-64-v3 (AVX2, FMA), 6x16 micro-tile"
#include "kernels/cpu/packed_gemm_impl.inc"
