// The matrix product of the attention and deformable convolution CUDA kernels (.cu files only):
//
//   C[z][i][j] = epilogue(z, i, j, sum_k A(z, i, k) * B(z, k, j))     (i < m, j < n, k < K)
//
// where each sum is one chain of fused multiply-adds from 0 over k = 0 .. K-1 in order: the chain
// the CPU kernels' packed GEMM computes (kernels/cpu/packed_gemm.h), so that on CPUs with FMA
// (x86-64-v3 and v4) the CUDA kernels give the CPU kernels' bits. The operands come from loader
// functors, A(z, i, k) and B(z, k, j), so that a product can read a transposed or scaled operand,
// or compute it (the deformable convolution samples its columns inside the B loader: an implicit
// GEMM, no column matrix in memory); the epilogue stores each sum (adding a bias or a mask).
//
// The classic shared-memory tiling: a block of 256 threads computes a BM x BN tile of C, stepping
// through K in slices of kSliceK: the threads load the slice's BM x kSliceK elements of A and
// kSliceK x BN of B into shared memory (B's consecutive threads on consecutive columns j, which is
// where the deformable convolution's sampled pixels and a row-major B are contiguous), then each
// thread adds the slice to its TM x TN sums, rows ty + r * (BM / TM) and columns tx + c * (BN / TN),
// so that a warp's reads of a slice row are one broadcast (A) or 32 consecutive words (B), and its
// writes of C are coalesced. Why not cuBLAS or CUTLASS: neither guarantees the order of a sum (nor
// the CPU's), and cuBLAS would have to be found at run time (DEVELOPERS.md, "GPU products").
#pragma once

#include <cuda_runtime.h>

#include <stdint.h>

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {

constexpr int kGemmThreads = 256;
constexpr int kSliceK = 8;

template <int BM, int BN, int TM, int TN, class ALoader, class BLoader, class Epilogue>
__global__ void __launch_bounds__(kGemmThreads)
    ChainGemmKernel(int m, int n, int k, int z_offset, ALoader a, BLoader b, Epilogue store) {
  constexpr int kThreadsX = BN / TN, kThreadsY = BM / TM;
  static_assert(kThreadsX * kThreadsY == kGemmThreads, "a tile takes 256 threads");
  __shared__ float a_slice[kSliceK][BM + 1];  // + 1: the loads' rows fall in different banks
  __shared__ float b_slice[kSliceK][BN];
  const int z = static_cast<int>(blockIdx.z) + z_offset;
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  const int tx = static_cast<int>(threadIdx.x) % kThreadsX, ty = static_cast<int>(threadIdx.x) / kThreadsX;
  float sums[TM][TN];
#pragma unroll
  for (int r = 0; r < TM; ++r) {
#pragma unroll
    for (int c = 0; c < TN; ++c) sums[r][c] = 0.0f;
  }
  for (int k0 = 0; k0 < k; k0 += kSliceK) {
    const int depth = k - k0 < kSliceK ? k - k0 : kSliceK;
    for (int e = static_cast<int>(threadIdx.x); e < BM * kSliceK; e += kGemmThreads) {
      const int r = e / kSliceK, kk = e % kSliceK;
      a_slice[kk][r] = row0 + r < m && kk < depth ? a(z, row0 + r, k0 + kk) : 0.0f;
    }
    for (int e = static_cast<int>(threadIdx.x); e < BN * kSliceK; e += kGemmThreads) {
      const int kk = e / BN, c = e % BN;
      b_slice[kk][c] = col0 + c < n && kk < depth ? b(z, k0 + kk, col0 + c) : 0.0f;
    }
    __syncthreads();
    // Only the slice's `depth` terms join the chains: an extra fmaf(0, 0, s) would turn a sum of -0
    // into +0.
    if (depth == kSliceK) {
#pragma unroll
      for (int kk = 0; kk < kSliceK; ++kk) {
        float a_part[TM], b_part[TN];
#pragma unroll
        for (int r = 0; r < TM; ++r) a_part[r] = a_slice[kk][ty + r * kThreadsY];
#pragma unroll
        for (int c = 0; c < TN; ++c) b_part[c] = b_slice[kk][tx + c * kThreadsX];
#pragma unroll
        for (int r = 0; r < TM; ++r) {
#pragma unroll
          for (int c = 0; c < TN; ++c) sums[r][c] = fmaf(a_part[r], b_part[c], sums[r][c]);
        }
      }
    } else {
      for (int kk = 0; kk < depth; ++kk) {
#pragma unroll
        for (int r = 0; r < TM; ++r) {
#pragma unroll
          for (int c = 0; c < TN; ++c) {
            sums[r][c] = fmaf(a_slice[kk][ty + r * kThreadsY], b_slice[kk][tx + c * kThreadsX], sums[r][c]);
          }
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int i = row0 + ty + r * kThreadsY;
#pragma unroll
    for (int c = 0; c < TN; ++c) {
      const int j = col0 + tx + c * kThreadsX;
      if (i < m && j < n) store(z, i, j, sums[r][c]);
    }
  }
}

// Whether a product's m, n and k fit the kernel's 32-bit row, column and depth indices (and their
// tile origins). The loaders and epilogues compute their own offsets.
inline bool ChainGemmFits(int64_t m, int64_t n, int64_t k) {
  const int64_t limit = (int64_t{1} << 31) - 256;
  return m < limit && n < limit && k < limit;
}

// Launches the product for z = 0 .. batches - 1: 128 x 128 tiles of 8 x 8 sums per thread, or, for
// products at most 32 columns wide (attention's values), 128 x 32 tiles of 4 x 4.
template <class ALoader, class BLoader, class Epilogue>
Status LaunchChainGemm(int64_t batches, int64_t m, int64_t n, int64_t k, const ALoader& a, const BLoader& b,
                       const Epilogue& store, Stream stream, const char* what) {
  if (batches == 0 || m == 0 || n == 0) return Status::Ok();
  constexpr int64_t kMaxGridZ = 65535;
  if (!ChainGemmFits(m, n, k) || (m + 127) / 128 > kMaxGridZ) {
    return Status::Error("a matrix product of ", m, " x ", n, " outputs over ", k, " terms is beyond the GPU kernel's ",
                         "grid (at most 8388480 rows and 2^31 - 256 columns and terms)");
  }
  for (int64_t z0 = 0; z0 < batches; z0 += kMaxGridZ) {
    const unsigned int zs = static_cast<unsigned int>(batches - z0 < kMaxGridZ ? batches - z0 : kMaxGridZ);
    if (n <= 32) {
      const dim3 grid(1, static_cast<unsigned int>((m + 127) / 128), zs);
      ChainGemmKernel<128, 32, 4, 4><<<grid, kGemmThreads, 0, stream>>>(
          static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), static_cast<int>(z0), a, b, store);
    } else {
      const dim3 grid(static_cast<unsigned int>((n + 127) / 128), static_cast<unsigned int>((m + 127) / 128), zs);
      ChainGemmKernel<128, 128, 8, 8><<<grid, kGemmThreads, 0, stream>>>(
          static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), static_cast<int>(z0), a, b, store);
    }
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus(what, stream));
  }
  return Status::Ok();
}

}  // namespace opbridge::cuda
