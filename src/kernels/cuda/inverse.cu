// Matrix inverse CUDA kernel: a group of threads per matrix, the matrix and its inverse in shared
// memory. A group is a warp for orders up to kWarpMaxOrder (eight matrices per block), else the
// whole block. Every element goes through the CPU kernel's chain of float operations in its order
// (kernels/cpu/inverse.cc: getf2, then the two substitutions of getrs), so the bits are the CPU's:
//   factorization, step k: the first warp searches column k (each lane a strided set of rows, then
//     5 shuffle levels of shared::BetterPivot); rows k and the pivot row are swapped whole; the
//     multipliers are written (a thread per row); the trailing block is updated (a thread per
//     element). Four group barriers per step.
//   solve: a thread per column of X = P I runs both substitutions down its column (for k ascending,
//     x[i] -= l[i][k] * x[k]; for i descending, x[i] /= u[i][i], then x[r] -= u[r][i] * x[i]): the
//     columns are independent, so no barrier at all.
// Rows of A are padded to an odd stride in shared memory, so that a column's rows fall in different
// banks; X's columns belong to consecutive threads, so its rows are read whole. Orders beyond what
// the device's shared memory holds (order 167 on Hopper, 112 on most Ampere and Ada GPUs) work in
// global scratch instead, a block per matrix.
//
// Expected times on an H100: [4096, 4, 4]: 4096 warps in one wave (512 blocks), each some 4 steps of
// 4 warp barriers and a 4-deep solve: a few microseconds plus the launch, against 0.154 ms for
// com.microsoft::Inverse (H200, gpu.md). [64, 64, 64]: 64 blocks (one matrix each: 64 of 132 SMs),
// each 64 steps of a pivot search (5 shuffle levels), the swap, the multipliers and a trailing update
// of up to 63^2 elements over 256 threads (about 500 cycles of shared-memory issue at its largest),
// with 4 barriers: some 50-65k cycles, 30-38 us; then 64 threads solve their columns, about 4k
// updates each (two shared loads, a multiply, a subtract and a store), independent within a step so
// that they pipeline: issue-bound at some 20k cycles, 12 us. In all some 45-55 us, against 0.291 ms.
// The longest chain is one matrix's factorization, M steps. Before (e6826c2) the workspace
// was chosen at run time (generic loads and stores only, none known to be shared) and the solve's
// pointers could alias, so every update waited for the previous store (some 70 cycles each, 280k
// cycles a column): 0.15-0.2 ms. ptxas (CUDA 13, -fmad=false): sm_90 48 / 48 / 72 registers for the
// warp, block and global-memory variants, sm_75 64 / 56 / 80, no spills; the PTX of the two shared
// variants has only ld.shared / st.shared on the workspace.
#include "kernels/cuda/inverse.h"

#include <algorithm>

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/inverse_lu.h"

namespace opbridge::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int64_t kWarpMaxOrder = 16;
// Shared memory a block of the kernel may take: the device's opt-in limit per block (Hopper 227
// KB, Ampere A100 163 KB, other Ampere and Ada 99 KB, Turing 64 KB), at most this.
constexpr int64_t kMaxSharedBytes = 200 * 1024;

// One group's working memory, `WorkFloats(m)` floats: A (m rows of stride m + 1), X (m x m), the
// permutation and two slots (the pivot row, the info).
__host__ __device__ inline int64_t AStride(int64_t m) { return m + 1; }
__host__ __device__ inline int64_t WorkFloats(int64_t m) { return m * AStride(m) + m * m + m + 2; }

template <bool kWarpGroup>
__device__ inline void GroupSync() {
  if (kWarpGroup) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// Inverts matrices group, group + groups, ... of `batch` (m x m each, row-major). kGlobalWork: the
// group's memory is WorkFloats(m) floats per block of `global_work`, else the block's shared memory.
// A template parameter, not a run-time choice, so that the compiler knows the address space: the
// shared variant's accesses are shared loads and stores, not generic ones. `nan_if_singular`
// (check_errors = 1): a singular matrix's inverse is written as NaN, the defined result where the CPU
// op reports the error (the GPU does not wait to report it).
template <bool kWarpGroup, bool kGlobalWork>
__global__ void InverseKernel(const float* in, int64_t batch, int m, float* out, int32_t* info, bool nan_if_singular,
                              float* global_work) {
  extern __shared__ float shared_work[];
  const int group_threads = kWarpGroup ? kWarp : static_cast<int>(blockDim.x);
  const int groups_per_block = static_cast<int>(blockDim.x) / group_threads;
  const int group_in_block = static_cast<int>(threadIdx.x) / group_threads;
  const int t = static_cast<int>(threadIdx.x) % group_threads;
  const int64_t work_floats = WorkFloats(m);
  float* work;
  if constexpr (kGlobalWork) {
    work = global_work + blockIdx.x * work_floats;
  } else {
    work = shared_work + group_in_block * work_floats;
  }
  const int s = static_cast<int>(AStride(m));
  float* a = work;
  float* x = a + m * s;
  int32_t* perm = reinterpret_cast<int32_t*>(x + m * m);
  int32_t* slots = perm + m;  // [0]: the pivot row of the step; [1]: the info
  const int size = m * m;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * groups_per_block + group_in_block; b < batch;
       b += static_cast<int64_t>(gridDim.x) * groups_per_block) {
    const float* matrix = in + b * size;
    for (int e = t; e < size; e += group_threads) a[(e / m) * s + e % m] = matrix[e];
    for (int i = t; i < m; i += group_threads) perm[i] = i;
    if (t == 0) slots[1] = 0;
    GroupSync<kWarpGroup>();
    for (int k = 0; k < m; ++k) {
      if (t < kWarp) {  // the pivot: the first warp of the group
        int32_t pivot_row = k;
        const float diagonal = a[k * s + k];
        if (diagonal == diagonal) {  // a NaN on the diagonal stays the pivot, as in the serial search
          shared::PivotCandidate best{-2.0f, INT32_MAX};
          for (int r = k + t; r < m; r += kWarp) {
            best = shared::BetterPivot(best, shared::MakePivotCandidate(a[r * s + k], r, k));
          }
          for (int d = kWarp / 2; d > 0; d /= 2) {
            shared::PivotCandidate other;
            other.magnitude = __shfl_xor_sync(0xffffffffu, best.magnitude, d);
            other.row = __shfl_xor_sync(0xffffffffu, best.row, d);
            best = shared::BetterPivot(best, other);
          }
          pivot_row = best.row;
        }
        if (t == 0) slots[0] = pivot_row;
      }
      GroupSync<kWarpGroup>();
      const int p = slots[0];
      if (p != k) {
        for (int c = t; c < m; c += group_threads) {
          const float top = a[k * s + c];
          a[k * s + c] = a[p * s + c];
          a[p * s + c] = top;
        }
        if (t == 0) {
          const int32_t top = perm[k];
          perm[k] = perm[p];
          perm[p] = top;
        }
      }
      GroupSync<kWarpGroup>();
      const float pivot = a[k * s + k];
      if (t == 0 && pivot == 0.0f && slots[1] == 0) slots[1] = k + 1;
      const float reciprocal = 1.0f / pivot;
      for (int i = k + 1 + t; i < m; i += group_threads) {
        a[i * s + k] = shared::InverseMultiplier(a[i * s + k], pivot, reciprocal);
      }
      GroupSync<kWarpGroup>();
      const int trailing = m - k - 1;
      for (int e = t; e < trailing * trailing; e += group_threads) {
        const int i = k + 1 + e / trailing, c = k + 1 + e % trailing;
        a[i * s + c] -= a[i * s + k] * a[k * s + c];
      }
      GroupSync<kWarpGroup>();
    }
    for (int c = t; c < m; c += group_threads) shared::SolveInverseColumn(a, s, perm, m, c, x);
    GroupSync<kWarpGroup>();
    float* inverse = out + b * size;
    const bool singular_nan = nan_if_singular && slots[1] != 0;
    for (int e = t; e < size; e += group_threads) inverse[e] = singular_nan ? NAN : x[e];
    if (t == 0) info[b] = slots[1];
    GroupSync<kWarpGroup>();  // the next matrix overwrites the group's memory
  }
}

__global__ void FillInfoKernel(int32_t* info, int64_t batch) {
  OPBRIDGE_CUDA_FOR(int64_t, b, batch) info[b] = 0;
}

}  // namespace

Status Inverse(const float* input, int64_t batch, int64_t m, float* output, int32_t* info, bool nan_if_singular,
               ScratchAllocator& scratch, Stream stream) {
  ClearStaleError();
  if (batch == 0) return Status::Ok();
  if (m == 0) {  // the inverse of a 0 x 0 matrix is the 0 x 0 matrix, never singular
    FillInfoKernel<<<BlocksFor(batch), kThreads, 0, stream>>>(info, batch);
    return LaunchStatus("the inverse info kernel", stream);
  }
  if (m > kInverseMaxOrder) {
    return Status::Error("on the GPU the matrices' order must be at most ", kInverseMaxOrder,
                         " (the kernel indexes a matrix's elements with 32 bits), got ", m);
  }
  const int order = static_cast<int>(m);
  const size_t group_bytes = static_cast<size_t>(WorkFloats(m)) * sizeof(float);
  if (m <= kWarpMaxOrder) {
    constexpr int64_t groups = kThreads / kWarp;
    const int64_t blocks = (batch + groups - 1) / groups;
    InverseKernel<true, false><<<static_cast<unsigned int>(blocks < 65535 ? blocks : 65535), kThreads,
                                 groups * group_bytes, stream>>>(input, batch, order, output, info, nan_if_singular,
                                                                 nullptr);
    return LaunchStatus("the inverse kernel", stream);
  }
  const unsigned int blocks = static_cast<unsigned int>(batch < 65535 ? batch : 65535);
  DeviceFigures figures;
  OPBRIDGE_RETURN_IF_ERROR(CurrentDeviceFigures(&figures));
  const int64_t shared_limit = std::min<int64_t>(figures.shared_optin, kMaxSharedBytes);
  if (static_cast<int64_t>(group_bytes) <= shared_limit) {
    // Always the device's whole limit, never this call's size: the attribute is the kernel's on the
    // device, and concurrent calls (sessions run in parallel) must not lower it under each other.
    // Set once per device.
    static OncePerDevice shared_raised;
    OPBRIDGE_RETURN_IF_ERROR(shared_raised.Run(figures.device, [&] {
      return CudaError(cudaFuncSetAttribute(InverseKernel<false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_limit)),
                       "the inverse kernel's shared memory");
    }));
    InverseKernel<false, false><<<blocks, kThreads, group_bytes, stream>>>(input, batch, order, output, info,
                                                                           nan_if_singular, nullptr);
    return LaunchStatus("the inverse kernel", stream);
  }
  // Too large for shared memory: a block per matrix in global scratch (a bounded number of blocks,
  // each taking matrices in turn).
  const int64_t global_blocks = std::max<int64_t>(1, std::min<int64_t>(blocks, (int64_t{1} << 28) / group_bytes));
  const size_t bytes = static_cast<size_t>(global_blocks) * group_bytes;
  ScratchBlock work(scratch, bytes);  // on the stream's scratch: freed after the queued kernel (cuda_glue.h)
  if (work.data() == nullptr) return OutOfScratch(bytes);
  InverseKernel<false, true><<<static_cast<unsigned int>(global_blocks), kThreads, 0, stream>>>(
      input, batch, order, output, info, nan_if_singular, static_cast<float*>(work.data()));
  return LaunchStatus("the inverse kernel", stream);
}

}  // namespace opbridge::cuda
