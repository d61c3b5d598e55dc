// Running maximum / minimum scans along one axis (see extreme_scan.h for the rule).
//
// With inner > 1 (any axis but the last), step s of the scans of one outer slice is a row of
// `inner` contiguous elements, so the scans run side by side as lanes: one pass per step over a
// row, reading the previous row of outputs (still in L1: chunks of at most kMaxLanes lanes) and
// writing this one. Every comparison and selection is branch-free, so those loops vectorise, at
// x86-64-v2 and in an x86-64-v3 build (RunAtCpuLevel); the index selection is written with an integer mask,
// which GCC vectorises at x86-64-v2 (`cond ? step : prev` of 64-bit integers under a float
// comparison it leaves scalar there). With inner = 1 (the last axis) every row of `steps`
// elements is one scan, a chain of dependent selections: 4-byte types run 8 rows side by side
// through 8 x 8 transposes in registers (EightRows), the others one element at a time.
//
// Tasks take whole scans (a range of rows, or a chunk of lanes of a range of slices), so every
// output element is written by exactly one task: results do not depend on the threads.
#include "kernels/cpu/extreme_scan.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/shared/extreme_scan.h"

namespace opbridge::cpu {
namespace {

// About this many elements per task, so that scheduling costs little next to the work.
constexpr int64_t kTaskElements = int64_t{1} << 16;
// Lanes per chunk: 1024 values and indices are 12-16 KB, which the next step reads back from L1.
constexpr int64_t kMaxLanes = 1024;
// Software prefetching, for the scans that run against the address order, which the hardware
// prefetchers follow poorly (measured on the development VM, cache-cold, corner_pool's
// [1,128,128,128]: top 1.2 -> 0.75 ms, left 2.1 -> 1.0 ms; the forward scans unchanged):
// lanes fetch the row kPrefetchSteps steps ahead; eight-row blocks fetch the next group of rows
// when it is at most kPrefetchGroupBytes, else kRowAhead elements ahead in each row.
constexpr int64_t kPrefetchSteps = 4;
constexpr int64_t kRowAhead = 64;
constexpr int64_t kPrefetchGroupBytes = 16384;
constexpr int64_t kLine = 64;  // bytes per cache line

// One step of `width` lanes: out = x where x replaces prev, else prev; out_index likewise with
// `step` and prev_index.
template <Extreme kWhich, class T>
struct LanesStepBody {
  static constexpr const char* kName = "CumMax/CumMin: LanesStep";
  OPBRIDGE_ALWAYS_INLINE static void Run(const T* __restrict x, const T* __restrict prev,
                                         const int64_t* __restrict prev_index, T* __restrict out,
                                         int64_t* __restrict out_index, int64_t width, int64_t step) {
    for (int64_t j = 0; j < width; ++j) {
      const T v = x[j], p = prev[j];
      const bool take = shared::ExtremeReplaces<kWhich>(v, p);
      const int64_t mask = -static_cast<int64_t>(take);
      out[j] = take ? v : p;
      out_index[j] = (step & mask) | (prev_index[j] & ~mask);
    }
  }
};

template <Extreme kWhich, class T>
struct LanesStepValuesBody {
  static constexpr const char* kName = "CumMax/CumMin: LanesStepValues";
  OPBRIDGE_ALWAYS_INLINE static void Run(const T* __restrict x, const T* __restrict prev, T* __restrict out,
                                         int64_t width) {
    for (int64_t j = 0; j < width; ++j) {
      const T v = x[j], p = prev[j];
      out[j] = shared::ExtremeReplaces<kWhich>(v, p) ? v : p;
    }
  }
};

// `width` lanes over `steps` rows; step s is the row at in + s * stride (stride < 0: upwards).
template <Extreme kWhich, class T>
void Lanes(const T* in, T* values, int64_t* indices, int64_t steps, int64_t stride, int64_t width) {
  for (int64_t j = 0; j < width; ++j) values[j] = in[j];
  if (indices != nullptr) {
    for (int64_t j = 0; j < width; ++j) indices[j] = 0;
  }
  for (int64_t s = 1; s < steps; ++s) {
    const int64_t row = s * stride, prev = row - stride;
    if (s + kPrefetchSteps < steps) {
      const int64_t ahead = (s + kPrefetchSteps) * stride;
      for (int64_t j = 0; j < width; j += kLine / sizeof(T)) {
        __builtin_prefetch(in + ahead + j);
        __builtin_prefetch(values + ahead + j, 1);
      }
    }
    if (indices != nullptr) {
      RunAtCpuLevel<3, LanesStepBody<kWhich, T>>(in + row, values + prev, indices + prev, values + row, indices + row,
                                                 width, s);
    } else {
      RunAtCpuLevel<3, LanesStepValuesBody<kWhich, T>>(in + row, values + prev, values + row, width);
    }
  }
}

// Steps [begin, steps) of one row of `steps` contiguous elements, continuing from the running
// extreme `best` taken at step `best_step` (begin = 0: the row's first element starts it). kReverse
// scans the row from its last element.
template <Extreme kWhich, bool kReverse, bool kIndices, class T>
void RowSteps(const T* __restrict x, T* __restrict values, int64_t* __restrict indices, int64_t steps, int64_t begin,
              T best, int64_t best_step) {
  for (int64_t s = begin; s < steps; ++s) {
    const int64_t i = kReverse ? steps - 1 - s : s;
    const T v = x[i];
    if (s == 0 || shared::ExtremeReplaces<kWhich>(v, best)) {
      best = v;
      best_step = s;
    }
    values[i] = best;
    if (kIndices) indices[i] = best_step;
  }
}

// Eight rows at once, for 4-byte T (float, int32_t): a row's scan is a chain of dependent
// selections, so instead of one scan per row, blocks of 8 x 8 elements are transposed in
// registers, the 8 rows are scanned side by side as lanes over the block's 8 columns, and the
// results are transposed back. Running indices are kept as int32 lanes (steps < 2^31) and widened
// on the way out. Columns past the last full block are finished by RowSteps.
typedef float Floats8 __attribute__((vector_size(32)));
typedef int32_t Ints8 __attribute__((vector_size(32)));
template <class T>
struct Vector8;
template <>
struct Vector8<float> {
  using Type = Floats8;
};
template <>
struct Vector8<int32_t> {
  using Type = Ints8;
};

// The transpose of the 8 x 8 block r[0..7] (rows) in place; three rounds of two-input shuffles
// that x86 does in one instruction each (unpack, shuffle, 128-bit permute).
template <class V>
inline void Transpose8(V* r) {
  const Ints8 pair_lo = {0, 8, 1, 9, 4, 12, 5, 13}, pair_hi = {2, 10, 3, 11, 6, 14, 7, 15};
  const Ints8 quad_lo = {0, 1, 8, 9, 4, 5, 12, 13}, quad_hi = {2, 3, 10, 11, 6, 7, 14, 15};
  const Ints8 half_lo = {0, 1, 2, 3, 8, 9, 10, 11}, half_hi = {4, 5, 6, 7, 12, 13, 14, 15};
  V t[8], u[8];
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shuffle(r[k], r[k + 1], pair_lo);
    t[k + 1] = __builtin_shuffle(r[k], r[k + 1], pair_hi);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 8; k += 4) {
    u[k] = __builtin_shuffle(t[k], t[k + 2], quad_lo);
    u[k + 1] = __builtin_shuffle(t[k], t[k + 2], quad_hi);
    u[k + 2] = __builtin_shuffle(t[k + 1], t[k + 3], quad_lo);
    u[k + 3] = __builtin_shuffle(t[k + 1], t[k + 3], quad_hi);
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 4; ++k) {
    r[k] = __builtin_shuffle(u[k], u[k + 4], half_lo);
    r[k + 4] = __builtin_shuffle(u[k], u[k + 4], half_hi);
  }
}

template <Extreme kWhich, bool kReverse, bool kIndices, class T>
struct EightRowsBody {
  static constexpr const char* kName = "CumMax/CumMin: EightRows";
  OPBRIDGE_ALWAYS_INLINE static void Run(const T* __restrict in, T* __restrict values, int64_t* __restrict indices,
                                         int64_t steps);
};

template <Extreme kWhich, bool kReverse, bool kIndices, class T>
OPBRIDGE_ALWAYS_INLINE void EightRowsBody<kWhich, kReverse, kIndices, T>::Run(const T* __restrict in,
                                                                             T* __restrict values,
                                                                             int64_t* __restrict indices,
                                                                             int64_t steps) {
  using V = typename Vector8<T>::Type;
  const Ints8 lane_order = {7, 6, 5, 4, 3, 2, 1, 0};
  const int64_t blocks = steps / 8;
  // Short rows: Rows() prefetches the whole next group instead.
  const bool long_rows = 8 * steps * static_cast<int64_t>(sizeof(T)) > kPrefetchGroupBytes;
  V best = {};
  Ints8 best_step = {};
  for (int64_t b = 0; b < blocks; ++b) {
    // The block's columns in scan order: from the row's end backwards when kReverse.
    const int64_t column = kReverse ? steps - 8 * (b + 1) : 8 * b;
    const int64_t ahead = kReverse ? column - kRowAhead : column + kRowAhead;
    if (long_rows && ahead >= 0 && ahead < steps) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        __builtin_prefetch(in + k * steps + ahead);
        __builtin_prefetch(values + k * steps + ahead, 1);
      }
    }
    V block[8];
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      std::memcpy(&block[k], in + k * steps + column, sizeof(V));
      if (kReverse) block[k] = __builtin_shuffle(block[k], lane_order);
    }
    Transpose8(block);
    Ints8 steps_of_block[8];
    if (b == 0) best = block[0];  // the first element of each row starts its scan
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const V x = block[k];
      Ints8 take;
      if constexpr (std::is_floating_point_v<T>) {
        take = (kWhich == Extreme::kMax ? x >= best : x <= best) | (x != x);
      } else {
        take = kWhich == Extreme::kMax ? x >= best : x <= best;
      }
      best = take ? x : best;
      const int32_t step = static_cast<int32_t>(8 * b + k);
      best_step = take ? Ints8{} + step : best_step;
      block[k] = best;
      steps_of_block[k] = best_step;
    }
    Transpose8(block);
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      if (kReverse) block[k] = __builtin_shuffle(block[k], lane_order);
      std::memcpy(values + k * steps + column, &block[k], sizeof(V));
    }
    if (kIndices) {
      Transpose8(steps_of_block);
      #pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        if (kReverse) steps_of_block[k] = __builtin_shuffle(steps_of_block[k], lane_order);
        int64_t* out = indices + k * steps + column;
        #pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) out[j] = steps_of_block[k][j];
      }
    }
  }
  #pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    const int64_t offset = k * steps;
    RowSteps<kWhich, kReverse, kIndices>(in + offset, values + offset, kIndices ? indices + offset : nullptr, steps,
                                         8 * blocks, static_cast<T>(best[k]), static_cast<int64_t>(best_step[k]));
  }
}

template <Extreme kWhich, bool kReverse, bool kIndices, class T>
void Rows(const T* in, T* values, int64_t* indices, int64_t rows, int64_t steps) {
  int64_t r = 0;
  if constexpr (sizeof(T) == 4) {
    if (steps >= 8 && steps <= INT32_MAX) {
      for (; r + 8 <= rows; r += 8) {
        const int64_t offset = r * steps;
        if (r + 16 <= rows && 8 * steps * static_cast<int64_t>(sizeof(T)) <= kPrefetchGroupBytes) {
          for (int64_t e = 8 * steps; e < 16 * steps; e += kLine / sizeof(T)) {
            __builtin_prefetch(in + offset + e);
            __builtin_prefetch(values + offset + e, 1);
          }
        }
        RunAtCpuLevel<3, EightRowsBody<kWhich, kReverse, kIndices, T>>(
            in + offset, values + offset, kIndices ? indices + offset : nullptr, steps);
      }
    }
  }
  for (; r < rows; ++r) {
    const int64_t offset = r * steps;
    RowSteps<kWhich, kReverse, kIndices>(in + offset, values + offset, kIndices ? indices + offset : nullptr, steps, 0,
                                         T{}, 0);
  }
}

template <Extreme kWhich, class T>
Status Scan(const T* in, const ScanLayout& layout, bool reverse, T* values, int64_t* indices,
            const TaskRunner& runner) {
  const int64_t outer = layout.outer, steps = layout.steps, inner = layout.inner;
  if (outer == 0 || steps == 0 || inner == 0) return Status::Ok();
  if (inner == 1) {
    const int64_t rows_per_task = std::max<int64_t>(1, kTaskElements / steps);
    return ParallelFor(runner, NumChunks(outer, rows_per_task), [&](size_t task) {
      const int64_t first = static_cast<int64_t>(task) * rows_per_task;
      const int64_t rows = std::min(rows_per_task, outer - first);
      const int64_t offset = first * steps;
      if (indices != nullptr) {
        Rows<kWhich, false, true>(in + offset, values + offset, indices + offset, rows, steps);
      } else if (reverse) {
        Rows<kWhich, true, false>(in + offset, values + offset, nullptr, rows, steps);
      } else {
        Rows<kWhich, false, false>(in + offset, values + offset, nullptr, rows, steps);
      }
    });
  }
  // A task is one lane chunk of a range of outer slices (several slices when one chunk covers a
  // slice and a slice is small).
  const int64_t lanes = std::min(inner, kMaxLanes);
  const int64_t chunks = NumChunks(inner, lanes);
  const int64_t slices_per_task = chunks == 1 ? std::max<int64_t>(1, kTaskElements / (steps * inner)) : 1;
  const int64_t slice_groups = NumChunks(outer, slices_per_task);
  // A reverse scan starts at the last row and steps upwards.
  const int64_t start = reverse ? (steps - 1) * inner : 0;
  const int64_t stride = reverse ? -inner : inner;
  return ParallelFor(runner, slice_groups * chunks, [&](size_t task) {
    const int64_t group = static_cast<int64_t>(task) / chunks, chunk = static_cast<int64_t>(task) % chunks;
    const int64_t first_lane = chunk * lanes, width = std::min(lanes, inner - first_lane);
    const int64_t last_slice = std::min(outer, (group + 1) * slices_per_task);
    for (int64_t slice = group * slices_per_task; slice < last_slice; ++slice) {
      const int64_t offset = slice * steps * inner + first_lane + start;
      Lanes<kWhich>(in + offset, values + offset, indices != nullptr ? indices + offset : nullptr, steps, stride,
                    width);
    }
  });
}

}  // namespace

template <class T>
Status ScanAxis(Extreme extreme, const T* in, const ScanLayout& layout, bool reverse, T* values, int64_t* indices,
                const TaskRunner& runner) {
  if (extreme == Extreme::kMax) return Scan<Extreme::kMax>(in, layout, reverse, values, indices, runner);
  return Scan<Extreme::kMin>(in, layout, reverse, values, indices, runner);
}

template Status ScanAxis<float>(Extreme, const float*, const ScanLayout&, bool, float*, int64_t*, const TaskRunner&);
template Status ScanAxis<double>(Extreme, const double*, const ScanLayout&, bool, double*, int64_t*,
                                 const TaskRunner&);
template Status ScanAxis<int32_t>(Extreme, const int32_t*, const ScanLayout&, bool, int32_t*, int64_t*,
                                  const TaskRunner&);
template Status ScanAxis<int64_t>(Extreme, const int64_t*, const ScanLayout&, bool, int64_t*, int64_t*,
                                  const TaskRunner&);

}  // namespace opbridge::cpu
