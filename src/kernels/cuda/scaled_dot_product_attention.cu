// Scaled dot-product attention CUDA kernel: three launches, each a whole pass over the batch.
// 1. scores = (q / sqrt(E)) k^T + mask, written into attn (chain_gemm.cuh: each score one chain of
//    fused multiply-adds over E in order, as the CPU's packed GEMM; the mask added after it).
// 2. the softmax of each row in place, half a warp per row, as the CPU kernel sums it: lane l of 16
//    takes the row's elements l, l + 16, ... in order (the CPU's 16 fixed lanes), the maximum over
//    the lanes (exact in any order), exp(x - max) by the CPU's fused polynomial
//    (kernels/shared/exp_polynomial.h) with each lane's sum, the lanes' sums added as the CPU's tree
//    (lane l + width into lane l, widths 8, 4, 2, 1), then each weight times 1 / sum.
// 3. out = attn v (chain_gemm.cuh again, the chain over the keys in order), in 64 x 32 tiles for a
//    value width of at most 32 (attention.detr: 8 x 15 = 120 blocks on 132 SMs, where 128 x 32 tiles
//    made 64 and left half the GPU idle: some 20 us before, 10-12 us now).
//
// Expected times on an H100 for attention.detr ([8, 900, 32] q, k and v): the scores are 6.5 M
// chains of 32 (207 M multiply-adds, about 6 us of the SMs' FP32 rate) written once (26 MB, some
// 9 us of DRAM time); the softmax reads the 26 MB rows three times, mostly from L2, and writes them
// twice (some 20-25 us); out reads attn once (207 M multiply-adds over 26 MB, some 10 us). With
// this simple tiling at perhaps 40% of the FP32 rate: some 50-60 us, against 0.135 ms for bmm,
// softmax, bmm on an H200 (gpu.md). The longest chain is one score row's softmax, Ns / 16 steps of
// each of its three passes.
#include "kernels/cuda/scaled_dot_product_attention.h"

#include <math.h>

#include "kernels/cuda/chain_gemm.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/shared/exp_polynomial.h"

namespace opbridge::cuda {
namespace {

constexpr int kSumLanes = 16;  // the CPU softmax's fixed lanes

// The loaders and epilogues address matrix z at z * (rows * columns) in 64 bits and an element
// within it in 32 (the launch checks that every matrix holds fewer than 2^31 elements): with 64-bit
// offsets for every element, the 128 x 128 tiles spilled 32-92 bytes on sm_90 and 148 on sm_75.
//
// A(z, i, e) = q[z][i][e] / root: PyTorch's q / math.sqrt(E), rounded to float before the product.
struct ScaledQueries {
  const float* q;
  int64_t queries, embed;
  float root;
  __device__ float operator()(int z, int i, int e) const {
    return q[z * (queries * embed) + (i * static_cast<int>(embed) + e)] / root;
  }
};
// B(z, e, j) = k[z][j][e]: the scores' second operand is k transposed.
struct KeysTransposed {
  const float* k;
  int64_t keys, embed;
  __device__ float operator()(int z, int e, int j) const {
    return k[z * (keys * embed) + (j * static_cast<int>(embed) + e)];
  }
};
// scores[z][i][j] = sum + mask[(z)][i][j], into attn.
struct ScoresPlusMask {
  float* attn;
  const float* mask;  // or null
  bool mask_batched;
  int64_t queries, keys;
  __device__ void operator()(int z, int i, int j, float sum) const {
    const int64_t matrix = z * (queries * keys);
    const int in_matrix = i * static_cast<int>(keys) + j;
    if (mask != nullptr) sum += mask[(mask_batched ? matrix : 0) + in_matrix];
    attn[matrix + in_matrix] = sum;
  }
};
// A(z, i, j) = attn[z][i][j]; B(z, j, e) = v[z][j][e]; out[z][i][e] = sum.
struct RowMajor {
  const float* data;
  int64_t rows, columns;
  __device__ float operator()(int z, int i, int j) const {
    return data[z * (rows * columns) + (i * static_cast<int>(columns) + j)];
  }
};
struct StoreRowMajor {
  float* data;
  int64_t rows, columns;
  __device__ void operator()(int z, int i, int j, float sum) const {
    data[z * (rows * columns) + (i * static_cast<int>(columns) + j)] = sum;
  }
};

// Half a warp per row of `keys` scores (rows = batch x queries), in place: a warp takes rows 2w and
// 2w + 1, so that both halves run the same iterations and shuffle with the whole warp.
__global__ void SoftmaxRowsKernel(float* attn, int64_t rows, int64_t keys) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x % kSumLanes);
  const int half = static_cast<int>(threadIdx.x % 32) / kSumLanes;
  const int64_t first_warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  for (int64_t pair = first_warp; 2 * pair < rows; pair += warps) {
    const int64_t r = 2 * pair + half;
    const int64_t count = r < rows ? keys : 0;  // a last odd row leaves the second half idle
    float* row = attn + (r < rows ? r : 0) * keys;
    float max = -INFINITY;
    for (int64_t j = lane; j < count; j += kSumLanes) max = row[j] > max ? row[j] : max;  // a NaN never wins
    for (int width = kSumLanes / 2; width > 0; width /= 2) {
      const float other = __shfl_xor_sync(kAll, max, width, kSumLanes);
      max = other > max ? other : max;
    }
    float sum = 0.0f;
    for (int64_t j = lane; j < count; j += kSumLanes) {
      const float e = shared::ExpNonPositiveFused(row[j] - max);
      row[j] = e;
      sum += e;
    }
    for (int width = kSumLanes / 2; width > 0; width /= 2) {
      const float other = __shfl_down_sync(kAll, sum, width, kSumLanes);
      if (lane < width) sum += other;  // lane l + width into lane l, as the CPU's tree
    }
    // Times the reciprocal of the sum, as PyTorch's softmax and the CPU kernel.
    const float scale = 1.0f / __shfl_sync(kAll, sum, 0, kSumLanes);
    for (int64_t j = lane; j < count; j += kSumLanes) row[j] *= scale;
  }
}

__global__ void ZeroKernel(float* data, int64_t count) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) data[i] = 0.0f;
}

}  // namespace

Status ScaledDotProductAttention(const float* q, const float* k, const float* v, const float* mask,
                                 const AttentionSizes& s, float* out, float* attn, Stream stream) {
  ClearStaleError();
  if (s.batch == 0 || s.queries == 0) return Status::Ok();
  if (s.keys == 0) {  // no keys: empty weights, and out sums nothing
    const int64_t count = s.batch * s.queries * s.value;
    if (count == 0) return Status::Ok();
    ZeroKernel<<<BlocksFor(count), kThreads, 0, stream>>>(out, count);
    return LaunchStatus("the attention output kernel", stream);
  }
  // The matrices' elements fit the loaders' 32-bit offsets (q, k, v, the scores and the output).
  constexpr int64_t kMatrixLimit = int64_t{1} << 31;
  for (const int64_t elements : {s.queries * s.embed, s.keys * s.embed, s.keys * s.value, s.queries * s.keys,
                                 s.queries * s.value}) {
    if (elements >= kMatrixLimit) {
      return Status::Error("on the GPU each matrix of q, k, v, the weights and the output must hold fewer than 2^31 "
                           "elements, got ", elements);
    }
  }
  // PyTorch divides q by math.sqrt(E), a double, then rounds to float.
  const float root = static_cast<float>(sqrt(static_cast<double>(s.embed)));
  OPBRIDGE_RETURN_IF_ERROR(LaunchChainGemm(s.batch, s.queries, s.keys, s.embed,
                                           ScaledQueries{q, s.queries, s.embed, root},
                                           KeysTransposed{k, s.keys, s.embed},
                                           ScoresPlusMask{attn, mask, s.mask_batched, s.queries, s.keys}, stream,
                                           "the attention score kernel"));
  const int64_t rows = s.batch * s.queries;
  SoftmaxRowsKernel<<<BlocksFor((rows + 1) / 2 * 32), kThreads, 0, stream>>>(attn, rows, s.keys);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the attention softmax kernel", stream));
  return LaunchChainGemm(s.batch, s.queries, s.value, s.keys, RowMajor{attn, s.queries, s.keys},
                         RowMajor{v, s.keys, s.value}, StoreRowMajor{out, s.queries, s.value}, stream,
                         "the attention output kernel");
}

}  // namespace opbridge::cuda
