// PackedGemm for x86-64-v4 CPUs (see packed_gemm.h). Compiled with -march=x86-64-v4.
#define OPBRIDGE_PACKED_GEMM_NAME kPackedGemmX86_64_v4
#define OPBRIDGE_PACKED_GEMM_LABEL "opbridge x86-64-v4 (AVX-512), 12x32 micro-tile"
#include "kernels/cpu/packed_gemm_impl.inc"
