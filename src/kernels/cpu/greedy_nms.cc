// Ordering by score and the greedy-suppression grid (see greedy_nms.h).
#include "kernels/cpu/greedy_nms.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/shared/nms_rules.h"

namespace opbridge::cpu {
namespace {

// A key whose ascending order is the descending order of scores (NaN first, -0 tied with +0).
inline uint32_t DescendingKey(float score) { return shared::DescendingScoreKey(score); }

constexpr int64_t kRadixMinCount = 2048;  // below this a comparison sort is faster (measured)
constexpr int kRadixBits = 11;
constexpr uint32_t kRadixBuckets = 1u << kRadixBits;

}  // namespace

int64_t ScoreOrderScratchWords(int64_t count) {
  // keys and positions, twice (LSD radix sort ping-pongs), or count 64-bit composites; then the
  // bucket counters.
  const int64_t word32 = sizeof(uint32_t);
  const int64_t bytes = count * 4 * word32 + static_cast<int64_t>(kRadixBuckets) * word32;
  return (bytes + 7) / 8;
}

template <class T>
void ScoreOrder(const T* scores, int64_t count, int32_t* order, void* scratch) {
  if (count <= 0) return;
  if (count < kRadixMinCount) {
    // (key, position) composites are unique, so an unstable sort gives the stable order.
    auto* items = static_cast<uint64_t*>(scratch);
    for (int64_t i = 0; i < count; ++i) {
      items[i] = (uint64_t{DescendingKey(shared::Load(scores + i))} << 32) | static_cast<uint32_t>(i);
    }
    std::sort(items, items + count);
    for (int64_t i = 0; i < count; ++i) order[i] = static_cast<int32_t>(items[i] & 0xffffffffu);
    return;
  }
  // LSD radix sort of (key, position) by key, three passes of 11 bits; each pass is stable, so
  // equal keys keep ascending positions.
  const size_t n = static_cast<size_t>(count);
  auto* key_a = static_cast<uint32_t*>(scratch);
  uint32_t* key_b = key_a + n;
  auto* pos_a = reinterpret_cast<int32_t*>(key_b + n);
  int32_t* pos_b = pos_a + n;
  auto* histogram = reinterpret_cast<uint32_t*>(pos_b + n);
  for (size_t i = 0; i < n; ++i) {
    key_a[i] = DescendingKey(shared::Load(scores + i));
    pos_a[i] = static_cast<int32_t>(i);
  }
  for (int pass = 0; pass < 3; ++pass) {
    const int shift = pass * kRadixBits;
    std::fill(histogram, histogram + kRadixBuckets, 0u);
    for (size_t i = 0; i < n; ++i) ++histogram[(key_a[i] >> shift) & (kRadixBuckets - 1)];
    uint32_t sum = 0;
    for (uint32_t b = 0; b < kRadixBuckets; ++b) {
      const uint32_t c = histogram[b];
      histogram[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint32_t dst = histogram[(key_a[i] >> shift) & (kRadixBuckets - 1)]++;
      key_b[dst] = key_a[i];
      pos_b[dst] = pos_a[i];
    }
    std::swap(key_a, key_b);
    std::swap(pos_a, pos_b);
  }
  std::memcpy(order, pos_a, n * sizeof(int32_t));
}

template void ScoreOrder<float>(const float*, int64_t, int32_t*, void*);
template void ScoreOrder<shared::Float16>(const shared::Float16*, int64_t, int32_t*, void*);
template void ScoreOrder<shared::BFloat16>(const shared::BFloat16*, int64_t, int32_t*, void*);

// ---- the grid -------------------------------------------------------------------------------

namespace {

// Cells of all levels together: level 0 has at most about 2n cells over the bounding area and
// 2n along a side, the coarser levels a third of that together (see BuildGrid).
int64_t CellBudget(int64_t n) { return 12 * n + 64; }

// Scratch layout in int32 words: kept list [n] | cell_start [cells + 1] | cell_kept [cells] |
// level_items [n] | home [n] | home_level [n bytes] | cell_entries [n entries of 6 words].
int64_t GreedyWords(int64_t n) { return n + 2 * (CellBudget(n) + 1) + 2 * n + (n + 3) / 4 + 6 * n + 8; }

}  // namespace

size_t GreedyScratchBytes(int64_t count) { return static_cast<size_t>(GreedyWords(count)) * sizeof(int32_t); }

namespace greedy_detail {

bool BuildGrid(const GreedyProblem& p, void* memory, Grid* grid) {
  const int64_t n = p.count;
  float x_lo = std::numeric_limits<float>::infinity(), y_lo = x_lo;
  float x_hi = -x_lo, y_hi = -x_lo, max_extent = 0.0f;
  int64_t active = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (!p.active[k]) continue;
    const float* e = p.extents + 4 * k;
    if (!(std::isfinite(e[0]) && std::isfinite(e[1]) && std::isfinite(e[2]) && std::isfinite(e[3]))) {
      return false;  // the caller's geometry should not allow this; test every kept one instead
    }
    x_lo = std::min(x_lo, e[0]);
    y_lo = std::min(y_lo, e[1]);
    x_hi = std::max(x_hi, e[2]);
    y_hi = std::max(y_hi, e[3]);
    max_extent = std::max(max_extent, std::max(e[2] - e[0], e[3] - e[1]));
    ++active;
  }
  const float width = x_hi - x_lo, height = y_hi - y_lo;
  if (active < kMinGridCandidates || !std::isfinite(width) || !std::isfinite(height) ||
      !(max_extent > 0.0f) || !std::isfinite(max_extent)) {
    return false;
  }
  // Level 0's cells: about one per two active candidates over the bounding area (more cells cost
  // more to lay out than they save in queries, measured on nms.batched), and no more than that
  // along either side.
  const double budget = std::max(0.5 * static_cast<double>(active), 16.0);
  double cell0 = std::sqrt(static_cast<double>(width) * height / budget);
  cell0 = std::max({cell0, static_cast<double>(width) / budget, static_cast<double>(height) / budget,
                    static_cast<double>(max_extent) * 1e-6});
  if (!(cell0 > 0.0) || !std::isfinite(cell0)) return false;

  grid->x0 = x_lo;
  grid->y0 = y_lo;
  const int64_t cell_budget = CellBudget(n);
  int64_t cells = 0;
  int levels = 0;
  double cell = cell0;
  while (levels < kMaxLevels) {
    const bool last = cell >= max_extent || levels == kMaxLevels - 1;
    if (last) cell = std::max(cell, static_cast<double>(max_extent));
    Level& lv = grid->level[levels];
    lv = Level();
    lv.cell = static_cast<float>(cell);
    lv.inv_cell = static_cast<float>(1.0 / cell);
    lv.nx = static_cast<int32_t>(std::min<double>(std::floor(width / cell) + 1, 4.0 * n + 1));
    lv.ny = static_cast<int32_t>(std::min<double>(std::floor(height / cell) + 1, 4.0 * n + 1));
    lv.cell_offset = cells;
    cells += int64_t{lv.nx} * lv.ny;
    if (cells > cell_budget) return false;  // cannot happen with the sizes above
    ++levels;
    if (last) break;
    cell *= 2.0;
  }
  grid->levels = levels;

  int32_t* words = static_cast<int32_t*>(memory);
  grid->cell_start = words;
  grid->cell_kept = grid->cell_start + (cells + 1);
  grid->level_items = grid->cell_kept + cells;
  grid->home = grid->level_items + n;
  grid->home_level = reinterpret_cast<uint8_t*>(grid->home + n);
  grid->cell_entries = reinterpret_cast<greedy_detail::Entry*>(grid->home + n + (n + 3) / 4);
  std::fill(grid->cell_start, grid->cell_start + cells + 1, int32_t{0});
  std::fill(grid->cell_kept, grid->cell_kept + cells, int32_t{0});
  // Every active candidate's level and home cell, counted per cell and per level, so that
  // whichever of them are kept have their places ready.
  int32_t per_level[kMaxLevels] = {};
  for (int64_t k = 0; k < n; ++k) {
    grid->home[k] = -1;
    if (!p.active[k]) continue;
    const float* e = p.extents + 4 * k;
    const float longer = std::max(e[2] - e[0], e[3] - e[1]);
    int l = 0;
    while (l + 1 < levels && grid->level[l].cell < longer) ++l;
    const Level& lv = grid->level[l];
    const int64_t home = lv.cell_offset + int64_t{CellOf(e[1], y_lo, lv.inv_cell, lv.ny)} * lv.nx +
                         CellOf(e[0], x_lo, lv.inv_cell, lv.nx);
    grid->home[k] = static_cast<int32_t>(home);
    grid->home_level[k] = static_cast<uint8_t>(l);
    ++grid->cell_start[home + 1];
    ++per_level[l];
  }
  for (int64_t c = 0; c < cells; ++c) grid->cell_start[c + 1] += grid->cell_start[c];
  int32_t list_start = 0;
  for (int l = 0; l < levels; ++l) {
    grid->level[l].list_start = list_start;
    list_start += per_level[l];
  }
  return true;
}

}  // namespace greedy_detail
}  // namespace opbridge::cpu
