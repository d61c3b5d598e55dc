// The machinery every NMS-family kernel shares (nms, nms_rotated, nms_match, trt_batched_nms):
// ordering candidates by score, and greedy suppression.
//
// Greedy NMS visits candidates in processing order (highest score first) and keeps a candidate
// unless an earlier *kept* candidate suppresses it. Written that way round ("is the newcomer
// suppressed by anything kept so far?") only the kept candidates near the newcomer, and of a
// comparable size, need testing; a grid over the kept candidates finds them. The rule itself
// (IoU formula and comparison) belongs to each op and is passed in; the grid only skips pairs
// that the op's geometry guarantees cannot suppress each other.
//
// Framework-free; no allocation: the caller passes scratch memory of GreedyScratchBytes().
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half_storage.h"

namespace opbridge::cpu {

// ---- ordering by score ---------------------------------------------------------------------

// 64-bit words of scratch ScoreOrder needs for `count` scores (its callers carve it from arenas
// as uint64_t, which also gives the alignment it needs).
int64_t ScoreOrderScratchWords(int64_t count);

// Writes to order[0..count) the positions 0..count-1 sorted by descending score, as
// torch.sort(scores, descending=True, stable=True) orders them: NaN before every number, ties
// (-0 equal to +0 included) by position. count < 2^31. scratch: ScoreOrderScratchWords(count)
// 64-bit words. T: float, or half storage (shared::Float16, BFloat16), each score read as the float
// it is (exactly, and in the same order: the order of the half values' floats).
template <class T>
void ScoreOrder(const T* scores, int64_t count, int32_t* order, void* scratch);

// ---- greedy suppression --------------------------------------------------------------------

// One greedy problem: `count` candidates in processing order.
//
// extents[4 k .. 4 k + 3] = (x_lo, y_lo, x_hi, y_hi) is a closed rectangle covering every point
// where candidate k can overlap another. active[k] = 0 marks a candidate that can neither
// suppress nor be suppressed under the op's rule (degenerate or non-finite geometry). The
// caller's geometry guarantees that two active candidates whose extents do not intersect never
// suppress each other. When even disjoint candidates may (a rule like IoU >= 0), set
// test_every_pair and every pair is given to the rule, active or not.
//
// Optional size pruning: when sizes is not null, two candidates i, j can only suppress each
// other if min(sizes[i], sizes[j]) >= min_size_ratio * max(sizes[i], sizes[j]) (for an IoU
// rule with threshold t, IoU <= the ratio of the longer sides of the boxes and <= the ratio
// of their areas, so a size of either kind with a ratio a little under t is safe).
//
// Optional overlap pruning: with min_overlap_fraction f > 0, two candidates can only suppress
// each other if their extents overlap along x by more than f times the later candidate's x
// extent, and along y likewise (for axis-aligned IoU with threshold t, IoU <= overlap_x /
// max(width) and <= overlap_y / max(height), so f a little under t is safe). It is applied to
// a candidate only when its extent is long enough against its coordinates for rounding not to
// matter.
struct GreedyProblem {
  int64_t count = 0;
  const float* extents = nullptr;
  const uint8_t* active = nullptr;
  const float* sizes = nullptr;
  float min_size_ratio = 0.0f;
  float min_overlap_fraction = 0.0f;
  bool test_every_pair = false;
  int64_t max_kept = -1;  // stop once this many are kept (< 0: no limit)
};

// Bytes of scratch GreedySuppress needs for `count` candidates.
size_t GreedyScratchBytes(int64_t count);

namespace greedy_detail {

// A multi-level uniform grid over the kept candidates. Level l has square cells of side
// cell0 * 2^l; a candidate belongs to the first level whose cell side is at least its longer
// extent, and is stored once, in the cell of its (x_lo, y_lo) corner, in an array laid out in
// advance for every candidate that could be kept there. A query visits, at every level whose
// sizes are compatible with its own, the cells from which a candidate could reach its extent,
// or the level's list of kept candidates when that is shorter.
constexpr int kMaxLevels = 24;
constexpr int64_t kMinGridCandidates = 48;  // below this, testing every kept candidate is faster

struct Level {
  float cell = 0.0f;
  float inv_cell = 0.0f;
  int32_t nx = 0, ny = 0;
  int64_t cell_offset = 0;    // of this level's first cell in the grid's cell arrays
  int32_t list_start = 0;     // of this level's kept list in level_items
  int32_t kept = 0;           // candidates kept at this level so far
  float min_size = 0.0f, max_size = 0.0f;  // of the kept candidates here (when sizes are given)
};

// A kept candidate as the grid stores it: its extent and size next to each other, so that a
// query reads the candidates of a cell from one contiguous run of memory.
struct Entry {
  float x_lo, y_lo, x_hi, y_hi;
  float size;
  int32_t index;
};

struct Grid {
  float x0 = 0.0f, y0 = 0.0f;
  int levels = 0;
  Level level[kMaxLevels];
  int32_t* cell_start = nullptr;  // per cell: where its entries start in cell_entries
  int32_t* cell_kept = nullptr;   // per cell: how many of its entries are kept so far
  Entry* cell_entries = nullptr;  // kept candidates, grouped by cell
  int32_t* level_items = nullptr; // kept candidates, grouped by level
  int32_t* home = nullptr;        // per candidate: its cell (-1: not in the grid)
  uint8_t* home_level = nullptr;  // per candidate: its level
};

// Lays out an empty grid for the active candidates, in `memory` (GreedyScratchBytes(count)
// bytes minus the kept list). Returns false when no grid is worth building.
bool BuildGrid(const GreedyProblem& p, void* memory, Grid* grid);

inline int32_t CellOf(float v, float origin, float inv, int32_t n) {
  // Monotonic in v and clamped to the grid.
  const float c = std::floor((v - origin) * inv);
  if (!(c >= 0.0f)) return 0;
  return c >= static_cast<float>(n - 1) ? n - 1 : static_cast<int32_t>(c);
}

inline void Insert(Grid* g, const GreedyProblem& p, int32_t k) {
  const int32_t cell = g->home[k];
  if (cell < 0) return;
  Level& lv = g->level[g->home_level[k]];
  const float* e = p.extents + 4 * int64_t{k};
  const float size = p.sizes != nullptr ? p.sizes[k] : 0.0f;
  g->cell_entries[g->cell_start[cell] + g->cell_kept[cell]++] = Entry{e[0], e[1], e[2], e[3], size, k};
  g->level_items[lv.list_start + lv.kept] = k;
  if (p.sizes != nullptr) {
    lv.min_size = lv.kept == 0 ? size : std::min(lv.min_size, size);
    lv.max_size = lv.kept == 0 ? size : std::max(lv.max_size, size);
  }
  ++lv.kept;
}

// What a query checks of every kept candidate before the rule: that their sizes are
// compatible and that their extents overlap by more than (min_x, min_y).
struct Query {
  const float* e;
  float size;
  float min_x, min_y;  // overlap each extent must exceed (0: must merely touch)
  bool strict;         // overlaps must exceed min_x / min_y rather than reach 0

  Query(const GreedyProblem& p, int32_t j) : e(p.extents + 4 * int64_t{j}) {
    size = p.sizes != nullptr ? p.sizes[j] : 0.0f;
    const float w = e[2] - e[0], h = e[3] - e[1];
    // Rounding of the coordinates is below 1e-7 of their magnitude; with extents above 1e-4
    // of it, it is below 0.1% of the extent, which the caller's fraction allows for.
    strict = p.min_overlap_fraction > 0.0f && w > 1e-4f * (std::fabs(e[0]) + std::fabs(e[2])) &&
             h > 1e-4f * (std::fabs(e[1]) + std::fabs(e[3]));
    min_x = strict ? p.min_overlap_fraction * w : 0.0f;
    min_y = strict ? p.min_overlap_fraction * h : 0.0f;
  }

  bool MayInteract(const GreedyProblem& p, const float* a, float sa) const {
    // Computed without branches: most kept candidates a query meets fail one of the tests, in
    // no predictable pattern, and the mispredicted branches cost more than the tests (measured,
    // kernels alone, one thread: nms.single 11.8 -> 6.4 ms, nms_match 18.8 -> 11 ms).
    const float ox = std::min(a[2], e[2]) - std::max(a[0], e[0]);
    const float oy = std::min(a[3], e[3]) - std::max(a[1], e[1]);
    bool may = strict ? ((ox > min_x) & (oy > min_y)) : ((ox >= 0.0f) & (oy >= 0.0f));
    if (p.sizes != nullptr) may &= !(std::min(sa, size) < p.min_size_ratio * std::max(sa, size));
    return may;
  }
};

// Calls visit(i) for every kept candidate i whose extent and size allow it to interact with
// candidate j (each at most once); stops and returns true as soon as visit returns true.
template <class Visit>
bool ForEachNear(const Grid& g, const GreedyProblem& p, int32_t j, Visit&& visit) {
  const Query q(p, j);
  const float* e = q.e;
  for (int l = 0; l < g.levels; ++l) {
    const Level& lv = g.level[l];
    if (lv.kept == 0) continue;
    if (p.sizes != nullptr) {
      const float r = p.min_size_ratio;
      if (lv.max_size < r * q.size || r * lv.min_size > q.size) continue;  // all too small, or all too large
    }
    // A candidate here spans at most one cell side (a little more with rounding), so a home
    // corner that can reach the query's extent (by more than the required overlap) lies in
    // [x_lo + min_x - cell, x_hi - min_x] x [y_lo + min_y - cell, y_hi - min_y].
    const float reach = lv.cell * 1.001f;
    const int32_t ix0 = CellOf(e[0] + q.min_x - reach, g.x0, lv.inv_cell, lv.nx);
    const int32_t iy0 = CellOf(e[1] + q.min_y - reach, g.y0, lv.inv_cell, lv.ny);
    const int32_t ix1 = CellOf(e[2] - q.min_x, g.x0, lv.inv_cell, lv.nx);
    const int32_t iy1 = CellOf(e[3] - q.min_y, g.y0, lv.inv_cell, lv.ny);
    const int64_t cells = int64_t{ix1 - ix0 + 1} * (iy1 - iy0 + 1);
    if (cells >= lv.kept) {
      const int32_t* items = g.level_items + lv.list_start;
      for (int32_t t = 0; t < lv.kept; ++t) {
        const int32_t i = items[t];
        if (q.MayInteract(p, p.extents + 4 * int64_t{i}, p.sizes != nullptr ? p.sizes[i] : 0.0f) && visit(i)) {
          return true;
        }
      }
      continue;
    }
    for (int32_t y = iy0; y <= iy1; ++y) {
      const int64_t row = lv.cell_offset + int64_t{y} * lv.nx;
      for (int32_t x = ix0; x <= ix1; ++x) {
        const Entry* entries = g.cell_entries + g.cell_start[row + x];
        const int32_t kept = g.cell_kept[row + x];
        for (int32_t t = 0; t < kept; ++t) {
          if (q.MayInteract(p, &entries[t].x_lo, entries[t].size) && visit(entries[t].index)) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace greedy_detail

// Runs greedy suppression. suppresses(i, j) says whether kept candidate i suppresses the later
// candidate j (the op's exact rule). Writes kept[k] = 1 or 0 for every candidate (0 also for
// candidates after max_kept was reached) and returns the number kept. When first_suppressor is
// not null it also receives, for every suppressed candidate, the earliest kept candidate that
// suppresses it, and -1 for the others. scratch: GreedyScratchBytes(count) bytes, 8-byte aligned.
template <class Rule>
int64_t GreedySuppress(const GreedyProblem& p, const Rule& suppresses, uint8_t* kept,
                       int32_t* first_suppressor, void* scratch) {
  const int64_t n = p.count;
  std::memset(kept, 0, static_cast<size_t>(n));
  if (first_suppressor != nullptr) std::fill(first_suppressor, first_suppressor + n, int32_t{-1});
  const int64_t limit = p.max_kept < 0 ? n : p.max_kept;
  if (n == 0 || limit == 0) return 0;
  // The kept candidates in order, for the path without a grid.
  int32_t* kept_list = static_cast<int32_t*>(scratch);
  int64_t num_kept = 0;

  greedy_detail::Grid grid;
  const bool use_grid = !p.test_every_pair && n >= greedy_detail::kMinGridCandidates &&
                        greedy_detail::BuildGrid(p, kept_list + n, &grid);
  for (int64_t j = 0; j < n && num_kept < limit; ++j) {
    const int32_t jj = static_cast<int32_t>(j);
    if (!p.test_every_pair && !p.active[j]) {  // never suppressed, suppresses nothing
      kept[j] = 1;
      kept_list[num_kept++] = jj;
      continue;
    }
    int32_t first = -1;
    if (use_grid) {
      // ForEachNear has checked extents and sizes; the rule decides.
      if (first_suppressor == nullptr) {
        greedy_detail::ForEachNear(grid, p, jj, [&](int32_t i) {
          if (!suppresses(i, jj)) return false;
          first = i;
          return true;
        });
      } else {
        greedy_detail::ForEachNear(grid, p, jj, [&](int32_t i) {
          if ((first < 0 || i < first) && suppresses(i, jj)) first = i;
          return false;
        });
      }
    } else {
      for (int64_t k = 0; k < num_kept; ++k) {
        const int32_t i = kept_list[k];
        if ((p.test_every_pair || p.active[i]) && suppresses(i, jj)) {
          first = i;
          break;
        }
      }
    }
    if (first >= 0) {
      if (first_suppressor != nullptr) first_suppressor[j] = first;
      continue;
    }
    kept[j] = 1;
    kept_list[num_kept++] = jj;
    if (use_grid) greedy_detail::Insert(&grid, p, jj);
  }
  return num_kept;
}

}  // namespace opbridge::cpu
