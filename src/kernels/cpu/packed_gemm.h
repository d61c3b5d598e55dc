// The matrix product of the deformable convolution and attention kernels:
//
//   out[o][p] = bias[o] + sum_k weights[o][k] * columns[p][k]     (o < m, p < n, k < K)
//
// The kernel samples its columns pixel by pixel, each pixel's K values contiguous, so the
// product reads them in place; the weights are packed once per call into the panels the
// micro-kernel streams (PackWeights) and reused by every tile of every image. Each output
// element is one chain of fused multiply-adds over k = 0 .. K-1 in order (no reassociation),
// so results do not depend on tiling or thread count, and are the same on every CPU with FMA
// (x86-64-v3 and v4, every aarch64 CPU); x86-64-v2 CPUs have no FMA and round each product
// separately.
//
// Single-threaded: callers run it from their own tasks on ORT's pool. Compiled for three x86-64
// levels and chosen at run time, like the other vector code, and once for aarch64 (NEON). See
// DEVELOPERS.md for why this is our own micro-kernel and not a BLAS library's GEMM.
#pragma once

#include <cstddef>
#include <cstdint>

namespace opbridge::cpu {

struct PackedGemm {
  // Floats of packed weights for an m x K weight matrix.
  size_t (*packed_size)(int64_t m, int64_t k);
  // Packs weights[o][k] (row stride ldw) for Multiply.
  void (*pack_weights)(int64_t m, int64_t k, const float* weights, int64_t ldw, float* packed);
  // The same from the transposed weights, weights_t[k][o] (row stride ldt).
  void (*pack_weights_transposed)(int64_t m, int64_t k, const float* weights_t, int64_t ldt, float* packed);
  // Floats of scratch Multiply needs for n pixels (the pixel-major product before it is
  // transposed into out).
  size_t (*scratch_size)(int64_t m, int64_t n);
  // out[o * ldo + p] = (bias ? bias[o] : 0) + sum_k packed(o, k) * columns[p * ldc + k].
  void (*multiply)(int64_t m, int64_t n, int64_t k, const float* packed, const float* columns, int64_t ldc,
                   const float* bias, float* out, int64_t ldo, float* scratch);
  // The same product in pixel-major order, out[p * ldo + o] (ldo >= m), written straight into
  // out's rows without scratch: the same chains of multiply-adds as multiply's sums (k = 0 gives 0).
  void (*multiply_rows)(int64_t m, int64_t n, int64_t k, const float* packed, const float* columns, int64_t ldc,
                        float* out, int64_t ldo);
  // Output channels per packed panel. Packings for any m up to the same multiple of it are
  // identical (channels past m are zeros), so a product may be asked for that many channels:
  // every micro-tile is then whole (the extra channels are 0 + 0 * x).
  int64_t panel;
  const char* name;
};

// The variant for this CPU.
const PackedGemm& PackedGemmForThisCpu();

// Every variant this CPU can run, best first (for tests and benchmarks); returns the count.
int PackedGemmVariants(const PackedGemm** variants, int capacity);

}  // namespace opbridge::cpu
