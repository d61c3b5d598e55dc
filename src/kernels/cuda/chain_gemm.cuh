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
// The classic shared-memory tiling: a block computes a BM x BN tile of C, stepping through K in
// slices of kSliceK. Each thread holds TM x TN sums, for rows in groups of 4 (ty * 4 + r, then BM / 2
// further for TM = 8) and columns likewise, so that it reads its slice fragments as float4 (a warp's
// A reads are broadcasts, its B reads 16 consecutive float4). The slices are double-buffered: while
// the threads add slice s, they hold slice s + 1's elements, fetched by the loaders into registers,
// and store them into the other buffer after; one barrier a slice. A loads with consecutive threads
// along k (rows padded by 4 floats, so the 8 k's of a row fall in different banks), B along j (where
// the deformable convolution's sampled pixels and a row-major B are contiguous). The tile's shape
// changes no result: every sum is the same chain over k in order whichever tile holds it. Why not
// cuBLAS or CUTLASS: neither guarantees the order of a sum (nor the CPU's), and cuBLAS would have to
// be found at run time (DEVELOPERS.md, "GPU products").
#pragma once

#include <cuda_runtime.h>

#include <stdint.h>

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {

constexpr int kSliceK = 8;

// The rows (or columns) of a thread's sums: groups of 4 consecutive ones, `spread` apart.
__device__ inline int FragmentIndex(int thread, int r, int spread) {
  return (r / 4) * spread + thread * 4 + r % 4;
}

// The threads of a BM x BN tile of TM x TN sums a thread.
template <int BM, int BN, int TM, int TN>
constexpr int kTileThreads = (BM / TM) * (BN / TN);

// Two blocks an SM at least: for the 256-thread tiles of 64 sums a thread, at most 128 registers a
// thread (16 warps to hide the loaders' latency; unbounded, the 128 x 128 tiles take 165-179
// registers, one block an SM). Before Hopper the 256-row tile spills at 128 registers (ptxas, CUDA
// 13: 4 bytes for the deformable convolution's loaders on sm_75 to sm_89, none on sm_90), so there
// it runs one block an SM, 8 warps.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define OPBRIDGE_GEMM_MIN_BLOCKS(BM) ((BM) == 256 ? 1 : 2)
#else
#define OPBRIDGE_GEMM_MIN_BLOCKS(BM) 2
#endif
template <int BM, int BN, int TM, int TN, class ALoader, class BLoader, class Epilogue>
__global__ void __launch_bounds__(kTileThreads<BM, BN, TM, TN>, OPBRIDGE_GEMM_MIN_BLOCKS(BM))
    ChainGemmKernel(int m, int n, int k, int z_offset, ALoader a, BLoader b, Epilogue store) {
  constexpr int kThreadsX = BN / TN, kThreadsY = BM / TM, kBlock = kThreadsX * kThreadsY;
  static_assert(kBlock % 32 == 0 && kBlock <= 256, "a tile takes whole warps, at most 256 threads");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  static_assert(BM * kSliceK % kBlock == 0, "every thread loads the same number of A elements");
  constexpr int kALoads = BM * kSliceK / kBlock, kBLoads = (BN * kSliceK + kBlock - 1) / kBlock;
  constexpr int kAStride = BM + 4;  // + 4: a row's 8 k's in different banks, float4 alignment kept
  __shared__ __align__(16) float a_slice[2][kSliceK][kAStride];
  __shared__ __align__(16) float b_slice[2][kSliceK][BN];
  const int z = static_cast<int>(blockIdx.z) + z_offset;
  const int row0 = static_cast<int>(blockIdx.y) * BM, col0 = static_cast<int>(blockIdx.x) * BN;
  const int t = static_cast<int>(threadIdx.x);
  const int tx = t % kThreadsX, ty = t / kThreadsX;
  float a_next[kALoads], b_next[kBLoads];
  // Slice k0's elements into registers (0 past the edges: they never join a chain).
  auto fetch = [&](int k0) {
    const int depth = k - k0 < kSliceK ? k - k0 : kSliceK;
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int e = t + l * kBlock, r = e / kSliceK, kk = e % kSliceK;
      a_next[l] = row0 + r < m && kk < depth ? a(z, row0 + r, k0 + kk) : 0.0f;
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int e = t + l * kBlock, kk = e / BN, c = e % BN;
      b_next[l] = e < BN * kSliceK && col0 + c < n && kk < depth ? b(z, k0 + kk, col0 + c) : 0.0f;
    }
  };
  auto keep = [&](int buffer) {
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int e = t + l * kBlock;
      a_slice[buffer][e % kSliceK][e / kSliceK] = a_next[l];
    }
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int e = t + l * kBlock;
      if (e < BN * kSliceK) b_slice[buffer][e / BN][e % BN] = b_next[l];
    }
  };
  float sums[TM][TN];
#pragma unroll
  for (int r = 0; r < TM; ++r) {
#pragma unroll
    for (int c = 0; c < TN; ++c) sums[r][c] = 0.0f;
  }
  // One k of the slice in `buffer` added to every sum.
  auto add = [&](int buffer, int kk) {
    float a_part[TM], b_part[TN];
#pragma unroll
    for (int r = 0; r < TM; r += 4) {
      const float4 v = *reinterpret_cast<const float4*>(&a_slice[buffer][kk][FragmentIndex(ty, r, BM / 2)]);
      a_part[r] = v.x, a_part[r + 1] = v.y, a_part[r + 2] = v.z, a_part[r + 3] = v.w;
    }
#pragma unroll
    for (int c = 0; c < TN; c += 4) {
      const float4 v = *reinterpret_cast<const float4*>(&b_slice[buffer][kk][FragmentIndex(tx, c, BN / 2)]);
      b_part[c] = v.x, b_part[c + 1] = v.y, b_part[c + 2] = v.z, b_part[c + 3] = v.w;
    }
#pragma unroll
    for (int r = 0; r < TM; ++r) {
#pragma unroll
      for (int c = 0; c < TN; ++c) sums[r][c] = fmaf(a_part[r], b_part[c], sums[r][c]);
    }
  };
  if (k > 0) {
    fetch(0);
    keep(0);
  }
  __syncthreads();
  for (int k0 = 0, buffer = 0; k0 < k; k0 += kSliceK, buffer ^= 1) {
    const bool more = k0 + kSliceK < k;
    if (more) fetch(k0 + kSliceK);  // in flight while this slice is added
    // Only the slice's `depth` terms join the chains, so that each has exactly k terms, as the CPU's.
    if (k - k0 >= kSliceK) {
#pragma unroll
      for (int kk = 0; kk < kSliceK; ++kk) add(buffer, kk);
    } else {
      for (int kk = 0; kk < k - k0; ++kk) add(buffer, kk);
    }
    if (more) keep(buffer ^ 1);  // the other buffer: every thread finished reading it before the last barrier
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int i = row0 + FragmentIndex(ty, r, BM / 2);
#pragma unroll
    for (int c = 0; c < TN; ++c) {
      const int j = col0 + FragmentIndex(tx, c, BN / 2);
      if (i < m && j < n) store(z, i, j, sums[r][c]);
    }
    // One row of stores at a time: without this fence the compiler hoists every row's epilogue
    // loads (attention's mask: 64 of them) above the stores, with all 64 sums live, and spilled
    // 164 bytes on sm_75. The order of the stores changes no result.
    asm volatile("" ::: "memory");
  }
}

// Whether a product's m, n and k fit the kernel's 32-bit row, column and depth indices (and their
// tile origins). The loaders and epilogues compute their own offsets.
inline bool ChainGemmFits(int64_t m, int64_t n, int64_t k) {
  const int64_t limit = (int64_t{1} << 31) - 256;
  return m < limit && n < limit && k < limit;
}

// What a product's B loader costs against the multiply-adds an element feeds: a load (kLoaded), or
// a computation worth amortizing over more rows (kComputed: the deformable convolution samples
// four corners and runs 8 operations per element, so its products of more than 128 rows take
// 256-row tiles, each sampled element computed once for all the rows instead of once per 128).
enum class BCost { kLoaded, kComputed };

template <int BM, int BN, int TM, int TN, class ALoader, class BLoader, class Epilogue>
Status LaunchTiles(int64_t batches, int64_t m, int64_t n, int64_t k, const ALoader& a, const BLoader& b,
                   const Epilogue& store, Stream stream, const char* what) {
  constexpr int64_t kMaxGridYZ = 65535;
  if ((m + BM - 1) / BM > kMaxGridYZ) {
    return Status::Error("a matrix product of ", m, " x ", n, " outputs over ", k, " terms is beyond the GPU kernel's ",
                         "grid (at most ", kMaxGridYZ * BM, " rows for ", n, " columns)");
  }
  for (int64_t z0 = 0; z0 < batches; z0 += kMaxGridYZ) {
    const unsigned int zs = static_cast<unsigned int>(batches - z0 < kMaxGridYZ ? batches - z0 : kMaxGridYZ);
    const dim3 grid(static_cast<unsigned int>((n + BN - 1) / BN), static_cast<unsigned int>((m + BM - 1) / BM), zs);
    ChainGemmKernel<BM, BN, TM, TN><<<grid, kTileThreads<BM, BN, TM, TN>, 0, stream>>>(
        static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), static_cast<int>(z0), a, b, store);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus(what, stream));
  }
  return Status::Ok();
}

// Launches the product for z = 0 .. batches - 1 (the batches in the grid's z, so that small
// products fill the GPU together), in tiles that fit its shape, none wasted on rows or columns
// past its edges where a narrower one does:
//   - at most 32 columns (attention's values, n = 32): 64 x 32 tiles of 4 x 4 sums, 128 threads,
//     twice the blocks of 128-row tiles (attention.detr: 120 blocks instead of 64 on 132 SMs);
//   - at most 32 rows (the deformable convolution's groups of 32 output channels): 32 x 128 tiles
//     of 4 x 4 sums, instead of 128-row tiles three quarters on rows past the edge;
//   - a computed B (kBCost) of more than 128 rows: 256 x 64 tiles of 8 x 8 sums;
//   - else 128 x 128 tiles of 8 x 8 sums.
template <BCost kBCost = BCost::kLoaded, class ALoader, class BLoader, class Epilogue>
Status LaunchChainGemm(int64_t batches, int64_t m, int64_t n, int64_t k, const ALoader& a, const BLoader& b,
                       const Epilogue& store, Stream stream, const char* what) {
  if (batches == 0 || m == 0 || n == 0) return Status::Ok();
  if (!ChainGemmFits(m, n, k)) {
    return Status::Error("a matrix product of ", m, " x ", n, " outputs over ", k, " terms is beyond the GPU kernel's ",
                         "32-bit indices (at most 2^31 - 256 rows, columns and terms)");
  }
  if (n <= 32) return LaunchTiles<64, 32, 4, 4>(batches, m, n, k, a, b, store, stream, what);
  if (m <= 32) return LaunchTiles<32, 128, 4, 4>(batches, m, n, k, a, b, store, stream, what);
  if constexpr (kBCost == BCost::kComputed) {  // instantiated only for such products
    if (m > 128) return LaunchTiles<256, 64, 8, 8>(batches, m, n, k, a, b, store, stream, what);
  }
  return LaunchTiles<128, 128, 8, 8>(batches, m, n, k, a, b, store, stream, what);
}

}  // namespace opbridge::cuda
