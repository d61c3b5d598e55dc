// PackedGemm for x86-64-v2 CPUs (see packed_gemm.h). Compiled with -march=x86-64-v2.
#define OPBRIDGE_PACKED_GEMM_NAME kPackedGemmX86_64_v2
#define OPBRIDGE_PACKED_GEMM_LABEL "opbridge x86-64-v2 (SSE4.2, no FMA), 6x8 micro-tile"
#include "kernels/cpu/packed_gemm_impl.inc"
