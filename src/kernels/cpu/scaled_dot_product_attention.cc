// Scaled dot-product attention CPU kernel.
//
// Work layout:
// 1. Per batch, k and v are packed for PackedGemm (one task each): k [Ns][E] is the weight
//    matrix of scores^T = k q'^T, and v [Ns][Ev] the transposed weights of out^T = v^T attn^T.
// 2. One task per (batch, block of query rows), the block's scores (about kBlockBytes) in a task
//    buffer that stays warm in L2 from task to task:
//    - q' = q / sqrt(E) for the block's rows, then their scores against every key
//      (multiply_rows: the product in row-major order, straight into the buffer);
//    - per row, + mask, the maximum, exp(x - max) (exp_polynomial.h: fused multiply-adds on CPUs
//      with FMA, as the products) and their sum, then attn = exp * (1 / sum), written once and in order to the
//      output (scattered GEMM writes to its cold rows were slower);
//    - out = attn v for the block's rows, straight into out's rows.
// Each output row is written by exactly one task: results do not depend on the thread count.
#include "kernels/cpu/scaled_dot_product_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/packed_gemm.h"
#include "kernels/shared/exp_polynomial.h"

namespace opbridge::cpu {
namespace {

// Bytes of scores per task (they stay in a 1 MB L2 with the packed k and v of the batch); rows
// are a multiple of every PackedGemm micro-tile height (12 and 6).
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kRowStep = 12, kMaxRows = 192;

// Query rows per task: about kBlockBytes of scores, split evenly over the blocks.
int64_t BlockRows(int64_t queries, int64_t keys) {
  int64_t widest = kBlockBytes / (static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(keys, 1));
  widest = std::clamp<int64_t>(widest / kRowStep * kRowStep, kRowStep, kMaxRows);
  const int64_t blocks = (queries + widest - 1) / widest;
  const int64_t even = ((queries + blocks - 1) / blocks + kRowStep - 1) / kRowStep * kRowStep;
  return std::max<int64_t>(1, std::min(even, queries));
}

// The maximum of row[0 .. keys), exact in any order (NaN is left to the caller: the sum catches
// it). Kept in 4 vectors of V, the CPU level's native vector (GCC lowers the compare-and-select
// of wider generic vectors to scalars, and no loop form of a float maximum vectorises).
template <class V>
__attribute__((always_inline)) inline float RowMax(const float* row, int64_t keys) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(float);
  const int64_t whole = keys / (4 * kWidth) * (4 * kWidth);
  V lane[4];
  for (auto& v : lane) v = V{} - INFINITY;
  for (int64_t j = 0; j < whole; j += 4 * kWidth) {
    for (int u = 0; u < 4; ++u) {
      V x;
      std::memcpy(&x, row + j + u * kWidth, sizeof x);
      lane[u] = x > lane[u] ? x : lane[u];
    }
  }
  lane[0] = lane[1] > lane[0] ? lane[1] : lane[0];
  lane[2] = lane[3] > lane[2] ? lane[3] : lane[2];
  lane[0] = lane[2] > lane[0] ? lane[2] : lane[0];
  float max = -INFINITY;
  for (int64_t j = whole; j < keys; ++j) max = row[j] > max ? row[j] : max;
  for (int64_t l = 0; l < kWidth; ++l) max = lane[0][l] > max ? lane[0][l] : max;
  return max;
}

// e^x for x <= 0 in the exp form of the CPU level (exp_polynomial.h).
template <bool kFused>
__attribute__((always_inline)) inline float ExpForLevel(float x) {
  return kFused ? shared::ExpNonPositiveFused(x) : shared::ExpNonPositive(x);
}

// x = e^(x - max) for each lane of x (x <= max).
template <class V, bool kFused>
__attribute__((always_inline)) inline void ExpMinus(V& x, float max) {
  for (size_t l = 0; l < sizeof(V) / sizeof(float); ++l) x[l] = ExpForLevel<kFused>(x[l] - max);
}

// attn = softmax of `count` rows of `keys` scores (scores_stride apart), each plus its mask row
// (mask may be null); the scores are overwritten. The sum is kept in 16 lanes (element j in lane j % 16) added in a fixed
// order, so it is the same whatever vector width the loops compile to; it is taken in the exp's
// pass (a separate pass was a chain of dependent adds). A NaN score, or a row without a finite
// maximum (all -inf, or +inf), makes the sum and so the whole row NaN, as in PyTorch.
// Instantiated per x86-64 level below: the same bits at v3 and v4 (both fuse the exp's
// multiply-adds, kFused), within an ulp of those at v2 (no FMA).
template <class V, bool kFused>
__attribute__((always_inline)) inline void SoftmaxRows(float* scores, int64_t count, int64_t keys,
                                                       int64_t scores_stride, const float* mask, float* attn) {
  constexpr int64_t kLanes = 16;
  constexpr int64_t kWidth = sizeof(V) / sizeof(float);
  constexpr int64_t kParts = kLanes / kWidth;
  const int64_t whole = keys / kLanes * kLanes;
  // Fetch the lines of the output one row ahead (the last pass writes them in order, and they
  // are cold: the hardware prefetcher came too late; fetching at the row's own start left part
  // of the wait, 6% of the softmax).
  auto prefetch_row = [&](int64_t r) {
    for (int64_t j = 0; j < keys; j += 16) __builtin_prefetch(attn + r * keys + j, 1);
  };
  if (count > 0) prefetch_row(0);
  for (int64_t r = 0; r < count; ++r) {
    float* __restrict row = scores + r * scores_stride;
    if (r + 1 < count) prefetch_row(r + 1);
    if (mask != nullptr) {
      const float* __restrict m = mask + r * keys;
      for (int64_t j = 0; j < keys; ++j) row[j] += m[j];
    }
    const float max = RowMax<V>(row, keys);
    V sums[kParts];
    for (V& v : sums) v = V{};
    for (int64_t j = 0; j < whole; j += kLanes) {
      for (int64_t part = 0; part < kParts; ++part) {
        V e;
        std::memcpy(&e, row + j + part * kWidth, sizeof e);
        ExpMinus<V, kFused>(e, max);
        std::memcpy(row + j + part * kWidth, &e, sizeof e);
        sums[part] += e;
      }
    }
    float sum[kLanes];
    std::memcpy(sum, sums, sizeof sum);
    for (int64_t j = whole; j < keys; ++j) {
      row[j] = ExpForLevel<kFused>(row[j] - max);
      sum[j - whole] += row[j];
    }
    for (int64_t width = kLanes / 2; width > 0; width /= 2) {
      for (int64_t l = 0; l < width; ++l) sum[l] += sum[l + width];
    }
    // Times the reciprocal of the sum, as PyTorch's softmax (one rounding more than a division).
    const float scale = 1.0f / sum[0];
    float* __restrict attn_row = attn + r * keys;
    for (int64_t j = 0; j < keys; ++j) attn_row[j] = row[j] * scale;
  }
}

typedef float Floats4 __attribute__((vector_size(16)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats16 __attribute__((vector_size(64)));

#if defined(__x86_64__)
__attribute__((target("arch=x86-64-v4"))) void SoftmaxRowsV4(float* scores, int64_t count, int64_t keys,
                                                             int64_t scores_stride, const float* mask, float* attn) {
  SoftmaxRows<Floats16, true>(scores, count, keys, scores_stride, mask, attn);
}
__attribute__((target("arch=x86-64-v3"))) void SoftmaxRowsV3(float* scores, int64_t count, int64_t keys,
                                                             int64_t scores_stride, const float* mask, float* attn) {
  SoftmaxRows<Floats8, true>(scores, count, keys, scores_stride, mask, attn);
}
void SoftmaxRowsV2(float* scores, int64_t count, int64_t keys, int64_t scores_stride, const float* mask, float* attn) {
  SoftmaxRows<Floats4, false>(scores, count, keys, scores_stride, mask, attn);
}
#else
// aarch64: NEON's four lanes, the exp's multiply-adds fused as at x86-64-v3 and v4 (the same bits).
void SoftmaxRowsNeon(float* scores, int64_t count, int64_t keys, int64_t scores_stride, const float* mask,
                     float* attn) {
  SoftmaxRows<Floats4, true>(scores, count, keys, scores_stride, mask, attn);
}
#endif

}  // namespace

namespace detail {

int AttentionSoftmaxVariants(AttentionSoftmax* variants, int capacity) {
  int count = 0;
  auto add = [&](AttentionSoftmax f) {
    if (count < capacity) variants[count++] = f;
  };
#if defined(__x86_64__)
  const int level = X86_64Level();
  if (level >= 4) add(SoftmaxRowsV4);
  if (level >= 3) add(SoftmaxRowsV3);
  add(SoftmaxRowsV2);
#else
  add(SoftmaxRowsNeon);
#endif
  return count;
}

}  // namespace detail

namespace {

detail::AttentionSoftmax SoftmaxForThisCpu() {
  static const detail::AttentionSoftmax best = [] {
    detail::AttentionSoftmax variants[3];
    detail::AttentionSoftmaxVariants(variants, 3);
    return variants[0];
  }();
  static DispatchRecord record("ScaledDotProductAttention: SoftmaxRows");
  NoteLevel(record, LevelUpTo<4>());
  return best;
}

}  // namespace

Status ScaledDotProductAttention(const float* q, const float* k, const float* v, const float* mask,
                                 const AttentionSizes& s, float* out, float* attn, ScratchAllocator& scratch,
                                 const TaskRunner& runner) {
  if (s.batch == 0 || s.queries == 0) return Status::Ok();
  if (s.keys == 0) {  // no keys: empty weights, and out sums nothing
    std::fill(out, out + s.batch * s.queries * s.value, 0.0f);
    return Status::Ok();
  }
  const PackedGemm& gemm = PackedGemmForThisCpu();
  const detail::AttentionSoftmax softmax = SoftmaxForThisCpu();
  const size_t packed_k_floats = gemm.packed_size(s.keys, s.embed);
  const size_t packed_v_floats = gemm.packed_size(s.value, s.keys);
  const size_t batch_floats = packed_k_floats + packed_v_floats;
  const size_t call_bytes = s.batch * batch_floats * sizeof(float);
  ScratchBlock call_memory(scratch, call_bytes);
  if (call_memory.data() == nullptr) {
    return Status::Error("out of memory for the packed keys and values (", call_bytes, " bytes)");
  }
  float* packed = static_cast<float*>(call_memory.data());

  // 1. Pack k and v of every batch.
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(2 * s.batch), [&](size_t task) {
    const int64_t b = static_cast<int64_t>(task / 2);
    float* packed_k = packed + b * batch_floats;
    if (task % 2 == 0) {
      gemm.pack_weights(s.keys, s.embed, k + b * s.keys * s.embed, s.embed, packed_k);
    } else {  // the weights of out^T = v^T attn^T are v^T
      gemm.pack_weights_transposed(s.value, s.keys, v + b * s.keys * s.value, s.value, packed_k + packed_k_floats);
    }
  }));

  // 2. Scores, softmax and out, per (batch, block of query rows).
  const int64_t rows = BlockRows(s.queries, s.keys);
  const int64_t blocks = (s.queries + rows - 1) / rows;
  // PyTorch divides q by math.sqrt(E), a double, then rounds to float.
  const float root = static_cast<float>(std::sqrt(static_cast<double>(s.embed)));
  // Score rows padded to the GEMM's panel: every micro-tile of the score product is whole (the
  // packing's zero channels give the padding), and rows start on the same alignment.
  const int64_t stride = (s.keys + gemm.panel - 1) / gemm.panel * gemm.panel;
  const size_t task_bytes = ArenaBytes<float>(rows * s.embed) + ArenaBytes<float>(rows * stride);
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(s.batch * blocks), [&](size_t task) {
    const int64_t b = static_cast<int64_t>(task) / blocks;
    const int64_t i0 = (static_cast<int64_t>(task) % blocks) * rows;
    const int64_t count = std::min(rows, s.queries - i0);
    ScratchBlock memory(scratch, task_bytes);
    if (memory.data() == nullptr) {
      out_of_memory.store(true);
      return;
    }
    Arena arena(memory.data(), task_bytes);
    float* scaled = arena.Take<float>(rows * s.embed);  // [count][E]
    float* scores = arena.Take<float>(rows * stride);   // [count][stride >= Ns]
    const float* qb = q + (b * s.queries + i0) * s.embed;
    for (int64_t x = 0; x < count * s.embed; ++x) scaled[x] = qb[x] / root;
    const float* packed_k = packed + b * batch_floats;
    float* attn_rows = attn + (b * s.queries + i0) * s.keys;
    gemm.multiply_rows(stride, count, s.embed, packed_k, scaled, s.embed, scores, stride);
    const float* mask_rows =
        mask == nullptr ? nullptr : mask + ((s.mask_batched ? b * s.queries : 0) + i0) * s.keys;
    softmax(scores, count, s.keys, stride, mask_rows, attn_rows);
    gemm.multiply_rows(s.value, count, s.keys, packed_k + packed_k_floats, attn_rows, s.keys,
                       out + (b * s.queries + i0) * s.value, s.value);
  }));
  if (out_of_memory.load()) {
    return Status::Error("out of memory for a block's queries and scores (", task_bytes, " bytes)");
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
