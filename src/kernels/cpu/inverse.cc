// Matrix inverse CPU kernel.
//
// The method is PyTorch's: torch.linalg.inv solves A X = I with LAPACK getrf + getrs, an LU
// factorization with partial pivoting, P A = L U, then X = U^-1 (L^-1 P). Every step follows the
// reference LAPACK/BLAS order of operations, in float32:
//   factorization (getf2): at step k the pivot is the first row r >= k with the largest |a[r][k]|;
//     rows k and r are swapped whole; a[i][k] becomes the multiplier a[i][k] * (1 / pivot) (see
//     shared::InverseMultiplier; left unscaled when the pivot is 0, which is then LAPACK's info = k + 1); every
//     later row is updated a[i][c] -= a[i][k] * a[k][c];
//   forward substitution (trsm, unit lower): for k ascending, x[i] -= l[i][k] * x[k] for i > k;
//   back substitution (trsm, upper): for i descending, x[i] /= u[i][i], then x[r] -= u[r][i] * x[i]
//     for r < i.
// Following getf2's arithmetic also decides singularity as PyTorch does: whether rounding leaves
// an exact zero pivot in a matrix that is singular in exact arithmetic ([[1, 2, 3], [4, 5, 6],
// [7, 8, 9]] does, in float32) depends on it. Every element is one chain of operations in a fixed
// order, so results do not depend on the thread count or on which CPU runs them (no fused
// multiply-adds, only per-lane vector arithmetic).
//
// Two paths:
//   order <= 8: kLanes matrices at a time, one per vector lane (the arrays below are [row][column]
//     of lane vectors): a batch of small matrices (4x4 transforms, say) is the common case and one
//     matrix alone is too small to vectorise. Pivot choices differ between lanes, so row swaps are
//     lane-wise selects.
//   order > 8: one matrix at a time, every step a contiguous row operation over padded rows.
// Both are compiled for x86-64-v4, -v3 and the baseline (RunAtCpuLevel, chosen at run
// time); the results are the same on every CPU.
#include "kernels/cpu/inverse.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "kernels/cpu/cpu_level.h"
#include "kernels/shared/inverse_lu.h"

namespace opbridge::cpu {
namespace {

#define OPBRIDGE_INLINE __attribute__((always_inline)) inline

// Matrices per lane group: one AVX-512 vector of float32 (two AVX2 vectors, four SSE ones).
constexpr int kLanes = 16;
// Lane groups per task: 256 matrices, enough work to outweigh a task's cost even for order 1.
constexpr int64_t kGroupsPerTask = 16;
// Multiply-adds per task (about order^3 per matrix) on the one-matrix path.
constexpr int64_t kWorkPerTask = int64_t{1} << 17;
// Row stride of the one-matrix path's working copies, in floats: 64 bytes.
constexpr int64_t kRowAlign = 16;

// --- order <= 8: kLanes matrices per call ----------------------------------------------------------

// One float32 per lane, and the lane masks comparisons give (all bits set where true). With
// AVX-512 a Lanes value is one register; the other builds split it into two or four. (GCC notes
// that passing such values differs between builds, -Wpsabi, silenced for this file in
// CMakeLists.txt: the helpers taking them are always inlined, so no call passes one.)
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t LaneMask __attribute__((vector_size(kLanes * sizeof(int32_t))));

OPBRIDGE_INLINE Lanes Abs(Lanes v) {
  return reinterpret_cast<Lanes>(reinterpret_cast<LaneMask>(v) & INT32_MAX);  // clears the sign bits
}

OPBRIDGE_INLINE Lanes Select(LaneMask mask, Lanes if_true, Lanes if_false) { return mask ? if_true : if_false; }

// `value` in every lane (row numbers here: small integers, exact in float32).
OPBRIDGE_INLINE Lanes Splat(float value) { return Lanes{} + value; }

template <int M>
OPBRIDGE_INLINE void InvertLaneGroup(const float* in, int64_t count, float* out, int32_t* info) {
  Lanes a[M][M];  // the matrices, then their L (below the diagonal) and U factors
  Lanes x[M][M];  // P, then L^-1 P, then the inverse
  Lanes perm[M];  // row i of P A is row perm[i] of A (small integers, exact in float32)
  Lanes singular = {};  // LAPACK's info: 0, or the 1-based step of the first zero pivot
  constexpr int kSize = M * M;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < M; ++j) {
      for (int64_t l = 0; l < kLanes; ++l) {  // unused lanes invert the identity
        a[i][j][l] = l < count ? in[l * kSize + i * M + j] : (i == j ? 1.0f : 0.0f);
      }
    }
    perm[i] = Splat(i);
  }

  for (int k = 0; k < M; ++k) {
    // The pivot row of every lane: the first row with the largest |a[r][k]| (a NaN never wins).
    Lanes best = Abs(a[k][k]), pivot_row = Splat(k);
    for (int r = k + 1; r < M; ++r) {
      const LaneMask take = Abs(a[r][k]) > best;
      best = Select(take, Abs(a[r][k]), best);
      pivot_row = Select(take, Splat(r), pivot_row);
    }
    // Swap rows k and pivot_row, whole, lane by lane.
    for (int r = k + 1; r < M; ++r) {
      const LaneMask swap = pivot_row == Splat(r);
      for (int c = 0; c < M; ++c) {
        const Lanes top = a[k][c];
        a[k][c] = Select(swap, a[r][c], top);
        a[r][c] = Select(swap, top, a[r][c]);
      }
      const Lanes top = perm[k];
      perm[k] = Select(swap, perm[r], top);
      perm[r] = Select(swap, top, perm[r]);
    }
    const Lanes pivot = a[k][k];
    singular = Select((pivot == 0.0f) & (singular == 0.0f), Splat(k + 1), singular);
    // The multipliers, as getf2 scales the column (see shared::InverseMultiplier).
    const Lanes reciprocal = 1.0f / pivot;
    const LaneMask by_reciprocal = Abs(pivot) >= std::numeric_limits<float>::min();
    const LaneMask by_division = pivot != 0.0f;
    for (int i = k + 1; i < M; ++i) {
      a[i][k] = Select(by_reciprocal, a[i][k] * reciprocal, Select(by_division, a[i][k] / pivot, a[i][k]));
      for (int c = k + 1; c < M; ++c) a[i][c] -= a[i][k] * a[k][c];
    }
  }

  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < M; ++j) x[i][j] = Select(perm[i] == Splat(j), Splat(1.0f), Lanes{});
  }
  for (int k = 0; k < M; ++k) {
    for (int i = k + 1; i < M; ++i) {
      for (int c = 0; c < M; ++c) x[i][c] -= a[i][k] * x[k][c];
    }
  }
  for (int i = M - 1; i >= 0; --i) {
    for (int c = 0; c < M; ++c) x[i][c] /= a[i][i];
    for (int r = 0; r < i; ++r) {
      for (int c = 0; c < M; ++c) x[r][c] -= a[r][i] * x[i][c];
    }
  }

  for (int64_t l = 0; l < count; ++l) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < M; ++j) out[l * kSize + i * M + j] = x[i][j][l];
    }
    info[l] = static_cast<int32_t>(singular[l]);
  }
}

// Inverts `count` matrices of order m <= kInverseLaneMaxOrder, kLanes at a time.
struct InvertSmallBody {
  static constexpr const char* kName = "Inverse: InvertSmall";
  OPBRIDGE_ALWAYS_INLINE static void Run(int64_t m, const float* in, int64_t count, float* out, int32_t* info);
};

OPBRIDGE_ALWAYS_INLINE void InvertSmallBody::Run(int64_t m, const float* in, int64_t count, float* out, int32_t* info) {
  const int64_t size = m * m;
  for (int64_t first = 0; first < count; first += kLanes) {
    const int64_t n = std::min<int64_t>(kLanes, count - first);
    const float* group_in = in + first * size;
    float* group_out = out + first * size;
    int32_t* group_info = info + first;
    switch (m) {
      case 1: InvertLaneGroup<1>(group_in, n, group_out, group_info); break;
      case 2: InvertLaneGroup<2>(group_in, n, group_out, group_info); break;
      case 3: InvertLaneGroup<3>(group_in, n, group_out, group_info); break;
      case 4: InvertLaneGroup<4>(group_in, n, group_out, group_info); break;
      case 5: InvertLaneGroup<5>(group_in, n, group_out, group_info); break;
      case 6: InvertLaneGroup<6>(group_in, n, group_out, group_info); break;
      case 7: InvertLaneGroup<7>(group_in, n, group_out, group_info); break;
      case 8: InvertLaneGroup<8>(group_in, n, group_out, group_info); break;
      default: break;  // not reached: the caller sends only orders 1 to kInverseLaneMaxOrder
    }
  }
}

// --- order > 8: one matrix at a time, float32 ----------------------------------------------------

// The working copies of one matrix, rows padded to `stride` floats (a multiple of kRowAlign) so
// that every row operation works on whole blocks of kRowAlign floats: the matrix becoming U, the
// multipliers of L (kept apart from U, so that U's rows can be updated from the block holding the
// diagonal on), the solution, and the row permutation.
struct Workspace {
  float* u;
  float* l;
  float* x;
  int32_t* perm;
  int64_t stride;
};

// row[c] -= scale * source[c] for c in [begin, end), both multiples of kRowAlign.
OPBRIDGE_INLINE void SubtractScaledRow(float* __restrict row, const float* __restrict source, float scale,
                                       int64_t begin, int64_t end) {
  for (int64_t block = begin; block < end; block += kRowAlign) {
    for (int64_t c = block; c < block + kRowAlign; ++c) row[c] -= scale * source[c];
  }
}

// P A = L U (getf2's order, see the top of the file); returns LAPACK's info. U's entries left of
// the diagonal are not zeroed (they are never read).
OPBRIDGE_INLINE int32_t FactorLu(const Workspace& w, int64_t m) {
  float* u = w.u;
  float* l = w.l;
  const int64_t s = w.stride;
  int32_t info = 0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot_row = k;
    float best = std::fabs(u[k * s + k]);
    for (int64_t r = k + 1; r < m; ++r) {
      const float v = std::fabs(u[r * s + k]);
      if (v > best) {
        best = v;
        pivot_row = r;
      }
    }
    if (pivot_row != k) {
      std::swap_ranges(u + k * s, u + k * s + s, u + pivot_row * s);
      std::swap_ranges(l + k * s, l + k * s + k, l + pivot_row * s);
      std::swap(w.perm[k], w.perm[pivot_row]);
    }
    const float* row_k = u + k * s;
    const float pivot = row_k[k], reciprocal = 1.0f / pivot;
    if (pivot == 0.0f && info == 0) info = static_cast<int32_t>(k + 1);
    const int64_t first_block = (k + 1) / kRowAlign * kRowAlign;
    for (int64_t i = k + 1; i < m; ++i) {
      float* row_i = u + i * s;
      const float multiplier = shared::InverseMultiplier(row_i[k], pivot, reciprocal);
      l[i * s + k] = multiplier;
      SubtractScaledRow(row_i, row_k, multiplier, first_block, s);
    }
  }
  return info;
}

// row[c] -= scale[0] * source[0][c], then scale[1] * source[1][c], ... scale[3] * source[3][c]:
// four rank-1 updates in one pass over the row, in the same order as four SubtractScaledRow calls
// (so with the same result), with a quarter of the row's loads and stores.
OPBRIDGE_INLINE void SubtractScaledRows4(float* __restrict row, const float* const source[4], const float scale[4],
                                         int64_t begin, int64_t end) {
  const float *__restrict s0 = source[0], *__restrict s1 = source[1], *__restrict s2 = source[2],
              *__restrict s3 = source[3];
  const float f0 = scale[0], f1 = scale[1], f2 = scale[2], f3 = scale[3];
  for (int64_t block = begin; block < end; block += kRowAlign) {
    for (int64_t c = block; c < block + kRowAlign; ++c) {
      float v = row[c];
      v -= f0 * s0[c];
      v -= f1 * s1[c];
      v -= f2 * s2[c];
      v -= f3 * s3[c];
      row[c] = v;
    }
  }
}

// X = U^-1 L^-1 P from the factors (trsm's orders, see the top of the file). Both substitutions
// take four rows of the solution at a time: those four first update each other, then every other
// row gets their four updates in one pass (SubtractScaledRows4). Each element still receives its
// updates in trsm's order.
OPBRIDGE_INLINE void SolveIdentity(const Workspace& w, int64_t m) {
  const float* u = w.u;
  const float* l = w.l;
  float* x = w.x;
  const int64_t s = w.stride;
  std::fill(x, x + m * s, 0.0f);
  for (int64_t i = 0; i < m; ++i) x[i * s + w.perm[i]] = 1.0f;
  // Forward: for k ascending, x[i] -= l[i][k] * x[k] for every i > k.
  int64_t k0 = 0;
  for (; k0 + 4 <= m; k0 += 4) {
    for (int64_t i = k0 + 1; i < k0 + 4; ++i) {
      for (int64_t k = k0; k < i; ++k) SubtractScaledRow(x + i * s, x + k * s, l[i * s + k], 0, s);
    }
    const float* const source[4] = {x + k0 * s, x + (k0 + 1) * s, x + (k0 + 2) * s, x + (k0 + 3) * s};
    for (int64_t i = k0 + 4; i < m; ++i) SubtractScaledRows4(x + i * s, source, l + i * s + k0, 0, s);
  }
  for (int64_t k = k0; k < m; ++k) {
    for (int64_t i = k + 1; i < m; ++i) SubtractScaledRow(x + i * s, x + k * s, l[i * s + k], 0, s);
  }
  // Backward: for i descending, x[i] /= u[i][i], then x[r] -= u[r][i] * x[i] for every r < i.
  int64_t i0 = m - 1;
  for (; i0 >= 3; i0 -= 4) {
    for (int64_t i = i0; i > i0 - 4; --i) {
      float* row_i = x + i * s;
      for (int64_t j = i0; j > i; --j) SubtractScaledRow(row_i, x + j * s, u[i * s + j], 0, s);
      const float diagonal = u[i * s + i];
      for (int64_t c = 0; c < s; ++c) row_i[c] /= diagonal;
    }
    const float* const source[4] = {x + i0 * s, x + (i0 - 1) * s, x + (i0 - 2) * s, x + (i0 - 3) * s};
    for (int64_t r = 0; r < i0 - 3; ++r) {
      const float scale[4] = {u[r * s + i0], u[r * s + i0 - 1], u[r * s + i0 - 2], u[r * s + i0 - 3]};
      SubtractScaledRows4(x + r * s, source, scale, 0, s);
    }
  }
  for (int64_t i = i0; i >= 0; --i) {
    float* row_i = x + i * s;
    const float diagonal = u[i * s + i];
    for (int64_t c = 0; c < s; ++c) row_i[c] /= diagonal;
    for (int64_t r = 0; r < i; ++r) SubtractScaledRow(x + r * s, row_i, u[r * s + i], 0, s);
  }
}

struct InvertLargeBody {
  static constexpr const char* kName = "Inverse: InvertLarge";
  OPBRIDGE_ALWAYS_INLINE static void Run(int64_t m, const float* in, int64_t count, float* out, int32_t* info,
                                         const Workspace& w);
};

OPBRIDGE_ALWAYS_INLINE void InvertLargeBody::Run(int64_t m, const float* in, int64_t count, float* out, int32_t* info,
                                                 const Workspace& w) {
  const int64_t s = w.stride;
  for (int64_t b = 0; b < count; ++b) {
    const float* matrix = in + b * m * m;
    for (int64_t i = 0; i < m; ++i) {
      std::copy(matrix + i * m, matrix + i * m + m, w.u + i * s);
      std::fill(w.u + i * s + m, w.u + i * s + s, 0.0f);
      w.perm[i] = static_cast<int32_t>(i);
    }
    info[b] = FactorLu(w, m);
    SolveIdentity(w, m);
    for (int64_t i = 0; i < m; ++i) std::copy(w.x + i * s, w.x + i * s + m, out + b * m * m + i * m);
  }
}

}  // namespace

Status Inverse(const float* input, int64_t batch, int64_t m, float* output, int32_t* info, ScratchAllocator& scratch,
               const TaskRunner& runner) {
  if (batch == 0) return Status::Ok();
  if (m == 0) {
    std::fill(info, info + batch, 0);  // the inverse of a 0 x 0 matrix is the 0 x 0 matrix
    return Status::Ok();
  }
  const int64_t size = m * m;
  if (m <= kInverseLaneMaxOrder) {
    const int64_t per_task = kGroupsPerTask * kLanes;
    return ParallelFor(runner, NumChunks(batch, per_task), [&](size_t task) {
      const int64_t first = static_cast<int64_t>(task) * per_task;
      const int64_t count = std::min(per_task, batch - first);
      RunAtCpuLevel<4, InvertSmallBody>(m, input + first * size, count, output + first * size, info + first);
    });
  }
  const int64_t work = m * m * m;
  const int64_t per_task = std::max<int64_t>(1, kWorkPerTask / work);
  const int64_t stride = (m + kRowAlign - 1) / kRowAlign * kRowAlign;
  const size_t task_bytes = 3 * ArenaBytes<float>(m * stride) + ArenaBytes<int32_t>(m);
  return ParallelFor(runner, NumChunks(batch, per_task), [&](size_t task) {
    const int64_t first = static_cast<int64_t>(task) * per_task;
    const int64_t count = std::min(per_task, batch - first);
    ScratchBlock block(scratch, task_bytes);
    if (block.data() == nullptr) throw std::bad_alloc();  // ParallelFor reports it
    Arena arena(block.data(), task_bytes);
    Workspace w{arena.Take<float>(m * stride), arena.Take<float>(m * stride), arena.Take<float>(m * stride),
                  arena.Take<int32_t>(m), stride};
    RunAtCpuLevel<4, InvertLargeBody>(m, input + first * size, count, output + first * size, info + first, w);
  });
}

}  // namespace opbridge::cpu
