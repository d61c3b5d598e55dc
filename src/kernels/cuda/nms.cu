// NMS CUDA kernels, axis-aligned and rotated (see nms.h). Every op runs the same steps, with its box
// source and suppression rule (how a box enters and when a kept one suppresses a later one):
//   1. candidates: each problem's candidates sorted by score, ties by index (a stable sort of
//      DescendingScoreKey):
//        Nms: one problem, the whole list (a radix sort);
//        BatchedNms: a problem per category: the score sort, then a stable sort by category, and a
//          scan of where the categories change;
//        MulticlassNms, TensorRT batched NMS, NMSMatch: a problem per image and class: the plan
//          (step 2) on the counts of the entries above the score threshold (a scan of flags), then
//          those candidates packed problem after problem and one segmented sort of only them
//          (about 30,000 of nms.batched's 1.6 M entries, their arrays sized by that count);
//      and their boxes gathered in that order;
//   2. the plan (one block): per problem its mask's place, or the band path if the mask does not fit;
//   3. the suppression mask of every (row tile, column tile) pair of every problem in one grid-wide
//      launch (kernels/shared/nms_tiles.h);
//   4. per problem one block resolving the mask a tile at a time, stopping at the problem's cap;
//      then the band-path problems 4,096 candidates at a time: the band against the earlier bands'
//      kept boxes (a candidate tile against a kept tile per block, grid-wide), the band's own mask
//      (grid-wide), and its resolution (a block per problem);
//   5. the op's outputs from the kept lists (NMSMatch: first the first kept suppressor of each box).
// Scratch comes from the caller's device allocator (tied to ORT's stream), CUB's temporary storage
// included. Synchronizations: the count copy of the variable-size outputs, and, only where the mask's
// bound for the call exceeds its budget (shared::kNmsMaskBudgetWords) or a per-(image, class) call
// has more than shared::kNmsCandidateCountEntries entries, a copy of the plan (the exact mask size,
// how many problems take the band path and their most candidates, the candidates' count) before
// the mask and the candidates' arrays are allocated.
//
// Expected time on an H100 (estimates, not yet measured):
//   nms.single (20,000 boxes, one class): the sort (20,000 keys, a few us), the mask's 313 x 313
//   word pairs (200 M box pairs, most without overlap, so without a division: about 50-80 us; 50 MB
//   written, 17 us), then one block resolving 313 tiles, each a load of the tile's diagonal words
//   (prefetched), thread 0's greedy pass over its some 10 kept candidates (some 400 cycles of shared
//   loads) and the OR of their later words, eight rows' loads in flight at once (shared::
//   KeptRowsWord: 2 latencies, some 800 cycles), 4 barriers: some 1,400 cycles a tile, 0.25 ms; in
//   all about 0.3-0.35 ms against ORT's 3.63 ms and torchvision's 3.75 ms (gpu.md). Before
//   (e6826c2) the OR waited for each kept row's load in turn (3,005 dependent loads on nms.single's
//   data) and the mask kernel reloaded the row box for every test: 0.9-1.6 ms.
//   Past the mask budget (46,337 candidates or more alone in a call): Nms of 50,000 boxes of that
//   kind, 13 bands: the bands against the earlier kept boxes (some 200 M tests over the whole GPU,
//   0.13 ms), their masks (110 M tests, 0.07 ms), 782 tiles resolved as above (0.55 ms) and 52
//   launches: about 0.9-1.0 ms, where the mask path at 46,336 takes about 0.8 ms, so the time grows
//   smoothly through the budget. Before, one block of 64 threads tested every candidate against the
//   whole kept list from global memory: 30-50 ms.
//   nms.batched (80 classes x 20,000 boxes, score > 0.05, 100 per class): the flags' scan over 1.6 M
//   entries (about 10 us), the segmented sort of ~30,000 candidates, 80 problems of ~400 candidates
//   resolved in parallel (7 tiles each), one synchronization for the plan (mask size and candidate
//   count) and one for the row count: about 0.1 ms, against the CPU engine's 0.73 ms and ORT's
//   16.9 ms; some 15 MB of scratch (the flags' ranks over the entries, 12.8 MB, then ~1.5 MB for the
//   candidates), where arrays sized by the entries took ~75 MB.
//   Faster R-CNN's RPN (BatchedNms, ~4,000 proposals per level, 5 levels) and box head (~1,000 x 90
//   classes): a problem per category in parallel, tens of us each, where one block took ~1 ms.
#include "kernels/cuda/nms.h"

#include <optional>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/nms_layouts.h"
#include "kernels/shared/nms_rotated_rules.h"
#include "kernels/shared/nms_tiles.h"

namespace opbridge::cuda {
namespace {

using shared::kNmsTile;
using shared::NmsBox;
using shared::NmsProblem;

constexpr int kResolveThreads = 256;
constexpr int kPlanThreads = 512;  // 128 registers a thread: at 1,024 (64) the plan's int64 scans spilled 332 bytes

// ---- step 1: candidates ------------------------------------------------------------------------

template <class T>
__global__ void ScoreKeysKernel(const T* scores, int64_t n, uint32_t* keys, int32_t* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n) {
    keys[i] = shared::DescendingScoreKey(shared::Load(scores + i));
    positions[i] = static_cast<int32_t>(i);
  }
}

__global__ void SingleProblemKernel(int64_t n, NmsProblem* problems, int64_t* problem_count) {
  NmsProblem p{};
  p.count = p.kept_room = n;
  problems[0] = p;
  *problem_count = 1;
}

__global__ void CategoryKeysKernel(const int64_t* categories, const int32_t* positions, int64_t n, uint64_t* keys) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n) { keys[i] = shared::CategoryKey(categories[positions[i]]); }
}

// flags[i] = 1 where sorted entry i starts a category's run; flags[n] = 0 (the scan's total).
__global__ void RunStartsKernel(const uint64_t* keys, int64_t n, int64_t* flags) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n + 1) { flags[i] = i < n && (i == 0 || keys[i] != keys[i - 1]); }
}

// runs[i]: the runs that start before i (the flags' exclusive scan; runs[n] is their number). A run
// is a problem; its kept slots are its candidates' own.
__global__ void RunBeginsKernel(const int64_t* runs, int64_t n, NmsProblem* problems, int64_t* problem_count) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n + 1) {
    if (i == n) {
      *problem_count = runs[n];
    } else if (runs[i + 1] != runs[i]) {
      NmsProblem p{};
      p.begin = p.kept_begin = i;
      problems[runs[i]] = p;
    }
  }
}

__global__ void RunCountsKernel(int64_t n, const int64_t* problem_count, NmsProblem* problems) {
  const int64_t count = *problem_count;
  OPBRIDGE_CUDA_FOR(int64_t, p, count) {
    const int64_t end = p + 1 < count ? problems[p + 1].begin : n;
    problems[p].count = problems[p].kept_room = end - problems[p].begin;
  }
}

// flags[v] = 1 for a candidate entry v of the problem-major order; flags[entries] = 0.
template <class Layout>
__global__ void CandidateFlagsKernel(Layout layout, int64_t entries, int64_t* flags) {
  OPBRIDGE_CUDA_FOR(int64_t, v, entries + 1) { flags[v] = v < entries && layout.Candidate(v); }
}

// ranks: the flags' exclusive scan. Each candidate goes to its place among all candidates (ranks[v]:
// the problems one after another, each in box order): its score's key, its box and its problem.
template <class Layout>
__global__ void ScatterCandidatesKernel(Layout layout, const int64_t* ranks, int64_t entries, uint32_t* keys,
                                        int32_t* positions, int64_t* problem_of) {
  OPBRIDGE_CUDA_FOR(int64_t, v, entries) {
    if (ranks[v + 1] == ranks[v]) continue;  // not a candidate
    const int64_t p = v / layout.segment, at = ranks[v];
    keys[at] = shared::DescendingScoreKey(layout.Score(v));
    positions[at] = static_cast<int32_t>(v - p * layout.segment);
    problem_of[at] = p;
  }
}

// Problem p's run of candidates (for the segmented sort) and its entry: the first `limit` of its
// candidates take part, and it keeps at most `room`, in slots p * room ...
__global__ void SegmentProblemsKernel(const int64_t* ranks, int64_t segment, int64_t problems_total, int64_t limit,
                                      int64_t room, int64_t* segment_begins, int64_t* segment_ends,
                                      NmsProblem* problems, int64_t* problem_count) {
  OPBRIDGE_CUDA_FOR(int64_t, p, problems_total) {
    const int64_t begin = ranks[p * segment], candidates = ranks[(p + 1) * segment] - begin;
    segment_begins[p] = begin;
    segment_ends[p] = begin + candidates;
    NmsProblem problem{};
    problem.begin = begin;
    problem.count = candidates < limit ? candidates : limit;
    problem.kept_begin = p * room;
    problem.kept_room = room;
    problems[p] = problem;
    if (p == 0) *problem_count = problems_total;
  }
}

// The boxes of the candidates taking part, in their sorted order. problem_of: each candidate's problem
// in the per-(image, class) layouts, of the *candidates first places of the `entries` allocated (the
// host's bound on them, or their count); both null for a box list (every entry takes part, problem
// 0's boxes).
template <class Source, class Box>
__global__ void SortedBoxesKernel(Source source, const NmsProblem* problems, const int64_t* problem_of,
                                  const int64_t* candidates, const int32_t* positions, int64_t entries, Box* boxes) {
  const int64_t count = candidates != nullptr ? *candidates : entries;
  OPBRIDGE_CUDA_FOR(int64_t, i, count) {
    int64_t p = 0;
    if (problem_of != nullptr) {
      p = problem_of[i];
      if (i - problems[p].begin >= problems[p].count) continue;  // past its limit: never read
    }
    boxes[i] = source.BoxOf(p, positions[i]);
  }
}

// ---- step 2: the plan ----------------------------------------------------------------------------

// shared::PlanNmsProblems with block-wide scans, kPlanThreads problems at a time. totals: the call's
// mask words and (row tile, column tile) pairs, then its band-path problems and the most candidates
// one of them has, then *candidates (the call's candidates, copied with the plan; 0 where null);
// band_problems: those problems, in any order (each is suppressed on its own).
__global__ void __launch_bounds__(kPlanThreads)
    PlanKernel(NmsProblem* problems, const int64_t* problem_count, int64_t budget_words, const int64_t* candidates,
               int64_t* totals, int32_t* band_problems) {
  using Scan = cub::BlockScan<int64_t, kPlanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ int64_t carry_end, carry_pairs;
  __shared__ unsigned long long words_used, band_count, band_rows;
  const int64_t count = *problem_count;
  if (threadIdx.x == 0) {
    carry_end = carry_pairs = 0;
    words_used = band_count = band_rows = 0;
  }
  __syncthreads();
  for (int64_t base = 0; base < count; base += kPlanThreads) {
    const int64_t p = base + threadIdx.x;
    const bool in = p < count;
    const int64_t rows = in ? problems[p].count : 0;
    const int64_t size = shared::NmsMaskSize(rows), words = (rows + kNmsTile - 1) / kNmsTile;
    int64_t end = 0, chunk_size = 0;
    Scan(temp).InclusiveSum(size, end, chunk_size);
    end += carry_end;
    const bool uses = in && rows <= shared::kNmsMaxMaskRows && end <= budget_words;
    __syncthreads();  // the scan's storage is used again
    int64_t pair_begin = 0, chunk_pairs = 0;
    Scan(temp).ExclusiveSum(uses ? words * words : 0, pair_begin, chunk_pairs);
    if (in) {
      NmsProblem& problem = problems[p];
      problem.words = words;
      problem.uses_mask = uses;
      problem.mask_begin = end - size;
      problem.pair_begin = carry_pairs + pair_begin;
    }
    if (uses) atomicMax(&words_used, static_cast<unsigned long long>(end));
    if (in && !uses) {
      band_problems[atomicAdd(&band_count, 1ull)] = static_cast<int32_t>(p);
      atomicMax(&band_rows, static_cast<unsigned long long>(rows));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      carry_end += chunk_size;
      carry_pairs += chunk_pairs;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    totals[0] = static_cast<int64_t>(words_used);
    totals[1] = carry_pairs;
    totals[2] = static_cast<int64_t>(band_count);
    totals[3] = static_cast<int64_t>(band_rows);
    totals[4] = candidates != nullptr ? *candidates : 0;
  }
}

// ---- step 3: the mask ------------------------------------------------------------------------------

// The last problem whose first pair is at or before `item` (the one that holds it: problems off the
// mask path add no pairs, so they never hold an item).
__device__ int64_t ProblemOfPair(const NmsProblem* problems, int64_t count, int64_t item) {
  int64_t low = 0, high = count;  // the first problem whose pair_begin > item
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    if (problems[mid].pair_begin <= item) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low - 1;
}

// A block of kNmsTile threads per (row tile, column tile) pair, the pairs of every problem in turn:
// the column tile's boxes in shared memory, then each thread its row's word. Pairs below the
// diagonal are skipped (never read).
template <class Box, class Rule>
__global__ void __launch_bounds__(kNmsTile)
    MaskKernel(const NmsProblem* problems, const int64_t* problem_count, const int64_t* totals, const Box* boxes,
               Rule rule, uint64_t* mask) {
  __shared__ Box columns[kNmsTile];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t pairs = totals[1], count = *problem_count;
  for (int64_t item = blockIdx.x; item < pairs; item += gridDim.x) {
    const NmsProblem p = problems[ProblemOfPair(problems, count, item)];
    const int64_t local = item - p.pair_begin, row_tile = local / p.words, column = local % p.words;
    if (column < row_tile) continue;  // the same for the whole block
    const int64_t j = column * kNmsTile + t, i = row_tile * kNmsTile + t;
    if (j < p.count) columns[t] = boxes[p.begin + j];
    __syncthreads();
    if (i < p.count) {
      const Box row = boxes[p.begin + i];  // in registers for the 64 tests, not reloaded for each
      mask[p.mask_begin + i * p.words + column] = shared::NmsMaskWord(row, i, columns, column, p.count, rule);
    }
    __syncthreads();  // the columns are read before the next pair's overwrite them
  }
}

// ---- step 4: resolving -----------------------------------------------------------------------------

// The greedy pass of one block over `count` candidates whose mask rows are `rows` (`stride` words
// apart; row i's word c: the candidates of tile c it suppresses), tile by tile: the tile's diagonal
// words (loaded one tile ahead), thread 0's greedy pass over them (shared::ResolveTileBits), the kept
// candidates' positions (and, for the band path, boxes) written by their threads after the kept ones
// so far, and each later word of `removed` (shared memory, the caller's start: the candidates already
// removed) ORed with the kept rows' words by one thread (shared::KeptRowsWord). Returns the kept
// total, starting from `kept_before`, at most `room`.
template <class Box>
__device__ int64_t ResolveRows(const uint64_t* rows, int64_t stride, int64_t count, int64_t kept_before, int64_t room,
                               const int32_t* positions, const Box* boxes, int32_t* kept_positions, Box* kept_boxes,
                               uint64_t* removed, uint64_t (*diag)[kNmsTile], uint64_t* tile_kept,
                               int64_t* kept_total) {
  const int t = static_cast<int>(threadIdx.x);
  const int64_t words = (count + kNmsTile - 1) / kNmsTile;
  if (t < kNmsTile && t < count) diag[0][t] = rows[t * stride];
  if (t == 0) *kept_total = kept_before;
  __syncthreads();
  for (int64_t tile = 0; tile < words && *kept_total < room; ++tile) {
    const int64_t first = tile * kNmsTile;
    const int in_tile = static_cast<int>(count - first < kNmsTile ? count - first : kNmsTile);
    if (t == 0) *tile_kept = shared::ResolveTileBits(removed[tile], diag[tile & 1], in_tile, room - *kept_total);
    __syncthreads();
    const uint64_t kept = *tile_kept;
    const int64_t base = *kept_total;
    // The next tile's diagonal words, loaded while this tile's rows are ORed.
    const int64_t next = first + kNmsTile + t;
    if (t < kNmsTile && next < count) diag[(tile + 1) & 1][t] = rows[next * stride + tile + 1];
    if (t < kNmsTile && ((kept >> t) & 1)) {
      const int64_t at = base + shared::KeptRank(kept, t);
      kept_positions[at] = positions[first + t];
      if (kept_boxes != nullptr) kept_boxes[at] = boxes[first + t];
    }
    if (kept != 0) {
      for (int64_t w = tile + 1 + t; w < words; w += kResolveThreads) {
        removed[w] |= shared::KeptRowsWord(rows, stride, tile, kept, w);
      }
    }
    __syncthreads();
    if (t == 0) *kept_total = base + shared::PopCount(kept);
    __syncthreads();
  }
  return *kept_total;
}

// One block per problem on the mask path.
__global__ void __launch_bounds__(kResolveThreads)
    ResolveKernel(const NmsProblem* problems, const int64_t* problem_count, const uint64_t* mask,
                  const int32_t* sorted_positions, int32_t* kept_positions, int64_t* kept_counts) {
  __shared__ uint64_t removed[shared::kNmsMaxMaskWords];
  __shared__ uint64_t diag[2][kNmsTile];
  __shared__ uint64_t tile_kept;
  __shared__ int64_t kept_total;
  const int t = static_cast<int>(threadIdx.x);
  const int64_t count = *problem_count;
  for (int64_t index = blockIdx.x; index < count; index += gridDim.x) {
    const NmsProblem p = problems[index];
    if (!p.uses_mask) continue;  // the same for the whole block
    for (int64_t w = t; w < p.words; w += kResolveThreads) removed[w] = 0;
    const int64_t kept = ResolveRows<NmsBox>(mask + p.mask_begin, p.words, p.count, 0, shared::KeptRoom(p),
                                             sorted_positions + p.begin, nullptr, kept_positions + p.kept_begin,
                                             nullptr, removed, diag, &tile_kept, &kept_total);
    if (t == 0) kept_counts[index] = kept;
    __syncthreads();
  }
}

// ---- step 4, band path: the problems off the mask, kNmsBandRows candidates at a time ---------------
// A pass takes `count` band-path problems, band_problems[first ..]; its q-th has kNmsBandWords
// removed words at band_removed + q * kNmsBandWords and a band mask of kNmsBandRows rows of
// kNmsBandWords words at band_mask + q * kNmsBandRows * kNmsBandWords. Each kernel skips a problem
// that has kept its room or has no candidates in the band (the same for a whole block).

struct BandPass {
  const int32_t* band_problems;  // the pass's first
  int64_t count;
  int64_t band;  // candidates [band * kNmsBandRows, + kNmsBandRows) of each problem
  uint64_t* removed;
  uint64_t* mask;
};

// The candidates of the band that a kept box of an earlier band suppresses: a block of kNmsTile
// threads per (problem, candidate tile, kept tile), the kept tile's boxes in shared memory, each
// thread testing its candidate against them; a hit sets its bit of the tile's removed word.
template <class Box, class Rule>
__global__ void __launch_bounds__(kNmsTile)
    BandKeptKernel(const NmsProblem* problems, const Box* boxes, const Box* kept_boxes, const int64_t* kept_counts,
                   Rule rule, BandPass pass, int64_t kept_tiles) {
  __shared__ Box kept_tile[kNmsTile];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t items = pass.count * shared::kNmsBandWords * kept_tiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t q = item / (shared::kNmsBandWords * kept_tiles), rest = item % (shared::kNmsBandWords * kept_tiles);
    const int64_t candidate_tile = rest / kept_tiles, k_tile = rest % kept_tiles;
    const int32_t index = pass.band_problems[q];
    const NmsProblem p = problems[index];
    const int64_t kept = kept_counts[index], first = pass.band * shared::kNmsBandRows + candidate_tile * kNmsTile;
    if (kept >= shared::KeptRoom(p) || first >= p.count || k_tile * kNmsTile >= kept) continue;
    const int in_kept = static_cast<int>(kept - k_tile * kNmsTile < kNmsTile ? kept - k_tile * kNmsTile : kNmsTile);
    if (t < in_kept) kept_tile[t] = kept_boxes[p.kept_begin + k_tile * kNmsTile + t];
    __syncthreads();
    if (first + t < p.count) {
      const Box box = boxes[p.begin + first + t];
      if (shared::SuppressedByKept(kept_tile, in_kept, box, rule)) {
        atomicOr(reinterpret_cast<unsigned long long*>(&pass.removed[q * shared::kNmsBandWords + candidate_tile]),
                 1ull << t);
      }
    }
    __syncthreads();  // the kept tile is read before the next item's overwrite it
  }
}

// The band's own mask, as MaskKernel's: a block per (problem, row tile, column tile) pair; a row
// already removed gets 0 (it is never read).
template <class Box, class Rule>
__global__ void __launch_bounds__(kNmsTile)
    BandMaskKernel(const NmsProblem* problems, const Box* boxes, const int64_t* kept_counts, Rule rule, BandPass pass) {
  __shared__ Box columns[kNmsTile];
  const int t = static_cast<int>(threadIdx.x);
  constexpr int64_t kPairs = shared::kNmsBandWords * shared::kNmsBandWords;
  const int64_t items = pass.count * kPairs;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t q = item / kPairs, row_tile = (item % kPairs) / shared::kNmsBandWords;
    const int64_t column = item % shared::kNmsBandWords;
    const int32_t index = pass.band_problems[q];
    const NmsProblem p = problems[index];
    const int64_t band_first = pass.band * shared::kNmsBandRows;
    const int64_t in_band = p.count - band_first < shared::kNmsBandRows ? p.count - band_first : shared::kNmsBandRows;
    const bool done = pass.band > 0 && kept_counts[index] >= shared::KeptRoom(p);
    if (done || column < row_tile || column * kNmsTile >= in_band) continue;
    const Box* band = boxes + p.begin + band_first;
    const int64_t j = column * kNmsTile + t, i = row_tile * kNmsTile + t;
    if (j < in_band) columns[t] = band[j];
    __syncthreads();
    if (i < in_band) {
      const bool removed = (pass.removed[q * shared::kNmsBandWords + row_tile] >> t) & 1;
      const Box row = band[i];
      pass.mask[(q * shared::kNmsBandRows + i) * shared::kNmsBandWords + column] =
          removed ? 0 : shared::NmsMaskWord(row, i, columns, column, in_band, rule);
    }
    __syncthreads();
  }
}

// The band resolved by a block per problem (ResolveRows from the removed words and the kept count of
// the earlier bands), its kept boxes appended to the problem's kept boxes for the later bands.
template <class Box>
__global__ void __launch_bounds__(kResolveThreads)
    BandResolveKernel(const NmsProblem* problems, const Box* boxes, const int32_t* sorted_positions,
                      int32_t* kept_positions, Box* kept_boxes, int64_t* kept_counts, BandPass pass) {
  __shared__ uint64_t removed[shared::kNmsBandWords];
  __shared__ uint64_t diag[2][kNmsTile];
  __shared__ uint64_t tile_kept;
  __shared__ int64_t kept_total;
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t q = blockIdx.x; q < pass.count; q += gridDim.x) {
    const int32_t index = pass.band_problems[q];
    const NmsProblem p = problems[index];
    const int64_t band_first = pass.band * shared::kNmsBandRows, room = shared::KeptRoom(p);
    const int64_t before = pass.band == 0 ? 0 : kept_counts[index];
    int64_t kept = before;
    if (band_first < p.count && before < room) {  // the same for the whole block
      const int64_t in_band = p.count - band_first < shared::kNmsBandRows ? p.count - band_first : shared::kNmsBandRows;
      for (int64_t w = t; w < shared::kNmsBandWords; w += kResolveThreads) {
        removed[w] = pass.removed[q * shared::kNmsBandWords + w];
      }
      kept = ResolveRows<Box>(pass.mask + q * shared::kNmsBandRows * shared::kNmsBandWords, shared::kNmsBandWords,
                              in_band, before, room, sorted_positions + p.begin + band_first,
                              boxes + p.begin + band_first, kept_positions + p.kept_begin,
                              kept_boxes + p.kept_begin, removed, diag, &tile_kept, &kept_total);
    }
    if (t == 0) kept_counts[index] = kept;
    __syncthreads();
  }
}

// ---- step 5: outputs -------------------------------------------------------------------------------

__global__ void PositionsKernel(const int32_t* kept_positions, int64_t count, int64_t* output) {
  OPBRIDGE_CUDA_FOR(int64_t, k, count) { output[k] = kept_positions[k]; }
}

// The sum of kept_counts[0 .. *problem_count) to *total (one block).
__global__ void __launch_bounds__(kPlanThreads)
    TotalKeptKernel(const int64_t* kept_counts, const int64_t* problem_count, int64_t* total) {
  using Reduce = cub::BlockReduce<int64_t, kPlanThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const int64_t count = *problem_count;
  int64_t sum = 0;
  for (int64_t p = threadIdx.x; p < count; p += kPlanThreads) sum += kept_counts[p];
  const int64_t all = Reduce(temp).Sum(sum);
  if (threadIdx.x == 0) *total = all;
}

// BatchedNms's output order: a key per box position, its score's for the kept boxes, kNotACandidate
// for the others; a stable sort of the positions by it gives the kept ones in descending score order,
// ties by index. runs: the category runs' scan (RunBeginsKernel): sorted entry i is in problem
// runs[i + 1] - 1.
__global__ void UnkeptKeysKernel(int64_t n, uint32_t* keys, int32_t* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n) {
    keys[i] = shared::kNotACandidate;
    positions[i] = static_cast<int32_t>(i);
  }
}

template <class T>
__global__ void KeptKeysKernel(const NmsProblem* problems, const int64_t* runs, const int64_t* kept_counts,
                               const int32_t* kept_positions, const T* scores, int64_t n, uint32_t* keys) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n) {
    const int64_t problem = runs[i + 1] - 1;
    if (i - problems[problem].kept_begin < kept_counts[problem]) {
      const int32_t position = kept_positions[i];
      keys[position] = shared::DescendingScoreKey(shared::Load(scores + position));
    }
  }
}

__global__ void TotalKernel(const int64_t* offsets, const int64_t* counts, int64_t problems, int64_t* total) {
  *total = offsets[problems - 1] + counts[problems - 1];
}

// ---- NMSMatch: which kept box suppressed which --------------------------------------------------
// Every problem of NMSMatch has all n boxes (segment n, kept slots n): entry e = p * n + k is the
// problem's k-th box in processing order.

// kept[p * n + position] = 1 for the problem's kept boxes (the flags start zeroed).
__global__ void MatchKeptFlagsKernel(const int32_t* kept_positions, const int64_t* kept_counts, int64_t n,
                                     int64_t entries, uint8_t* kept) {
  OPBRIDGE_CUDA_FOR(int64_t, e, entries) {
    const int64_t p = e / n, k = e % n;
    if (k < kept_counts[p]) kept[p * n + kept_positions[e]] = 1;
  }
}

// first[e]: the processing position of the first kept box that suppresses box e (the earliest kept
// one whose rule holds: mmdeploy's record, see kernels/cpu/nms_match.cc), or -1 for a kept box; and
// the reporting kept box's count of them.
template <class T>
__global__ void FirstSuppressorKernel(const NmsBox* boxes, const int32_t* positions, const uint8_t* kept,
                                      shared::MatchRule rule, const T* scores, float report_threshold, int64_t n,
                                      int64_t entries, int32_t* first, unsigned long long* counts) {
  OPBRIDGE_CUDA_FOR(int64_t, e, entries) {
    const int64_t p = e / n, j = e % n, begin = p * n;
    first[e] = -1;
    if (kept[begin + positions[e]]) continue;
    for (int64_t i = 0; i < j; ++i) {
      if (kept[begin + positions[begin + i]] && rule(boxes[begin + i], boxes[e])) {
        first[e] = static_cast<int32_t>(i);
        if (shared::Load(scores + begin + positions[begin + i]) > report_threshold) atomicAdd(&counts[begin + i], 1ull);
        break;
      }
    }
  }
}

// The rows of reporting kept box e: (batch, class, its box, each box it suppressed first), in
// processing order, from offsets[e] on.
__global__ void MatchRowsKernel(const int32_t* positions, const int32_t* first, const unsigned long long* counts,
                                const int64_t* offsets, int64_t n, int64_t classes, int64_t entries, int64_t* rows) {
  OPBRIDGE_CUDA_FOR(int64_t, e, entries) {
    if (counts[e] == 0) continue;
    const int64_t p = e / n, i = e % n, begin = p * n;
    int64_t* row = rows + 4 * offsets[e];
    for (int64_t j = i + 1; j < n; ++j) {
      if (first[begin + j] != i) continue;
      row[0] = p / classes;
      row[1] = p % classes;
      row[2] = positions[e];
      row[3] = positions[begin + j];
      row += 4;
    }
  }
}

__global__ void MatchTotalKernel(const int64_t* offsets, const unsigned long long* counts, int64_t entries,
                                 int64_t* total) {
  *total = offsets[entries - 1] + static_cast<int64_t>(counts[entries - 1]);
}

// Slot k of problem p (one thread per slot): its (batch, class, box) row when k is kept.
__global__ void SelectedRowsKernel(const int32_t* kept_positions, const int64_t* kept_counts, const int64_t* offsets,
                                   int64_t classes, int64_t capacity, int64_t slots, int64_t* rows) {
  OPBRIDGE_CUDA_FOR(int64_t, slot, slots) {
    const int64_t p = slot / capacity, k = slot % capacity;
    if (k >= kept_counts[p]) continue;
    int64_t* row = rows + 3 * (offsets[p] + k);
    row[0] = p / classes;
    row[1] = p % classes;
    row[2] = kept_positions[slot];
  }
}

template <class T>
__global__ void MergeKeysKernel(const T* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                const int64_t* kept_counts, const int32_t* kept_positions, int64_t count,
                                uint64_t* keys, int64_t* entries) {
  OPBRIDGE_CUDA_FOR(int64_t, e, count) {
    keys[e] = shared::TrtMergeKey(scores, num_boxes, classes, capacity, kept_counts, kept_positions, e);
    entries[e] = e;
  }
}

template <class T>
__global__ void TrtDefaultsKernel(int64_t rows, int64_t row_size, T* dets, int32_t* labels, int32_t* index) {
  OPBRIDGE_CUDA_FOR(int64_t, r, rows) {
    for (int64_t v = 0; v < row_size; ++v) shared::Store(dets + r * row_size + v, 0.0f);
    labels[r] = -1;
    if (index != nullptr) index[r] = -1;
  }
}

template <class T>
__global__ void TrtDetectionsKernel(TrtBatchedNmsParams p, const T* boxes, int64_t loc_classes, const T* scores,
                                    int64_t num_boxes, int64_t classes, int64_t capacity, const int32_t* kept_positions,
                                    const uint64_t* merged_keys, const int64_t* merged_entries, int64_t rows_per_image,
                                    int64_t count, T* dets, int32_t* labels, int32_t* index) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) {
    const int64_t b = i / rows_per_image, row = i % rows_per_image;
    const int64_t at = b * classes * capacity + row;
    if (static_cast<uint32_t>(merged_keys[at]) == shared::kNotACandidate) continue;
    shared::WriteTrtDetection(p, boxes, loc_classes, scores, num_boxes, classes, capacity, kept_positions, b, row,
                              merged_entries[at], dets, labels, index);
  }
}

// ---- helpers ---------------------------------------------------------------------------------------

int BitsFor(int64_t values) {  // bits that hold 0 .. values - 1
  int bits = 0;
  while (bits < 62 && (int64_t{1} << bits) < values) ++bits;
  return bits;
}

// Blocks of a persistent grid that covers the device: its SMs times `per_sm`, at most `work`.
unsigned int PersistentBlocks(int64_t work, int per_sm) {
  DeviceFigures figures;
  int sms = 132;  // an H100's, where the driver cannot say (the grid's size changes no result)
  if (CurrentDeviceFigures(&figures).ok()) {
    sms = figures.sms;
  } else {
    (void)cudaGetLastError();
  }
  const int64_t blocks = static_cast<int64_t>(sms) * per_sm;
  return static_cast<unsigned int>(work < 1 ? 1 : (work < blocks ? work : blocks));
}

// CUB's temporary storage for a call's sorts and scans: one region of the call's scratch block, as
// large as the largest of them (sized on the host before the block is taken), which they use in turn
// (they run one after another on the stream). Each scratch request costs four arena operations
// (CudaScratchAllocator: a probe that fails cleanly on a full device, then the stream's block), so the
// NMS ops make few: a box list below the mask budget one (its arrays, CUB's storage and its mask),
// the per-(image, class) layouts two (the problems' and entries' arrays, then the candidates' with
// the mask); past the budget the plan's mask and the band path take one each. Before, every CUB call
// and the mask took their own: nms.single 3 requests (12 arena operations), nms.batched 5 (20),
// BatchedNms 6 (24).
struct CubStorage {
  void* data = nullptr;
  size_t bytes = 0;
};

// Grows *bytes to what a stable radix sort of `count` (Key, Value) pairs over bits [0, end_bit) needs.
template <class Key, class Value>
Status NeedForSortPairs(int64_t count, int end_bit, size_t* bytes, Stream stream) {
  size_t need = 0;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(
      cub::DeviceRadixSort::SortPairs(nullptr, need, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
                                      static_cast<const Value*>(nullptr), static_cast<Value*>(nullptr), count, 0,
                                      end_bit, stream),
      "sizing the NMS sort"));
  if (need > *bytes) *bytes = need;
  return Status::Ok();
}

// A stable radix sort of (key, value) pairs over bits [0, end_bit) of the keys.
template <class Key, class Value>
Status SortPairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t count,
                 int end_bit, const CubStorage& storage, Stream stream) {
  size_t bytes = storage.bytes;
  return CudaError(cub::DeviceRadixSort::SortPairs(storage.data, bytes, keys_in, keys_out, values_in, values_out, count,
                                                   0, end_bit, stream),
                   "the NMS sort");
}

// Grows *bytes to what an int64 exclusive scan of `count` values needs, in place or from one array to
// another.
Status NeedForScan(int64_t count, bool in_place, size_t* bytes, Stream stream) {
  size_t need = 0;
  auto* values = static_cast<int64_t*>(nullptr);
  OPBRIDGE_RETURN_IF_ERROR(CudaError(in_place ? cub::DeviceScan::ExclusiveSum(nullptr, need, values, count, stream)
                                              : cub::DeviceScan::ExclusiveSum(nullptr, need, values, values, count,
                                                                              stream),
                                     "sizing the NMS scan"));
  if (need > *bytes) *bytes = need;
  return Status::Ok();
}

// The exclusive sum of values[0 .. count), in place.
Status ExclusiveSumInPlace(int64_t* values, int64_t count, const CubStorage& storage, Stream stream) {
  size_t bytes = storage.bytes;
  return CudaError(cub::DeviceScan::ExclusiveSum(storage.data, bytes, values, count, stream), "the NMS scan");
}

// The exclusive sum of values[0 .. count) into sums.
Status ExclusiveSum(int64_t* values, int64_t* sums, int64_t count, const CubStorage& storage, Stream stream) {
  size_t bytes = storage.bytes;
  return CudaError(cub::DeviceScan::ExclusiveSum(storage.data, bytes, values, sums, count, stream), "the NMS row scan");
}

// The arrays every op's suppression uses: per problem and kept slot (at most `max_problems` problems,
// `kept_slots` slots), and per sorted candidate (`candidates`), carved separately: the per-(image,
// class) layouts size the candidates' arrays once the GPU has counted them. Box: shared::NmsBox or
// shared::RotatedNmsBox.
template <class Box>
struct Suppression {
  NmsProblem* problems;
  int64_t* problem_count;  // [1]
  int64_t* totals;         // [5]: the plan's figures (PlanKernel)
  int32_t* band_problems;  // the plan's band-path problems
  int32_t* kept_positions;
  Box* kept_boxes;  // the band path's kept boxes, in the kept slots
  int64_t* kept_counts;
  int32_t* sorted_positions;  // per candidate
  Box* sorted_boxes;

  static size_t ProblemBytes(int64_t max_problems, int64_t kept_slots) {
    return ArenaBytes<NmsProblem>(max_problems) + ArenaBytes<int64_t>(1) + ArenaBytes<int64_t>(5) +
           ArenaBytes<int32_t>(max_problems) + ArenaBytes<int32_t>(kept_slots) + ArenaBytes<Box>(kept_slots) +
           ArenaBytes<int64_t>(max_problems);
  }
  void CarveProblems(Arena* arena, int64_t max_problems, int64_t kept_slots) {
    problems = arena->Take<NmsProblem>(max_problems);
    problem_count = arena->Take<int64_t>(1);
    totals = arena->Take<int64_t>(5);
    band_problems = arena->Take<int32_t>(max_problems);
    kept_positions = arena->Take<int32_t>(kept_slots);
    kept_boxes = arena->Take<Box>(kept_slots);
    kept_counts = arena->Take<int64_t>(max_problems);
  }
  static size_t CandidateBytes(int64_t candidates) {
    return ArenaBytes<int32_t>(candidates) + ArenaBytes<Box>(candidates);
  }
  void CarveCandidates(Arena* arena, int64_t candidates) {
    sorted_positions = arena->Take<int32_t>(candidates);
    sorted_boxes = arena->Take<Box>(candidates);
  }
};

// Step 4's band path for the plan's `band_count` band-path problems (at most `band_rows` candidates
// each): passes of kNmsBandProblems problems, each pass band by band (the host knows how many from
// the plan), three launches a band, every one over the whole GPU but the resolve (a block per problem).
template <class Box, class Rule>
Status SuppressInBands(const Suppression<Box>& a, const Rule& rule, int64_t band_count, int64_t band_rows,
                       ScratchAllocator& scratch, Stream stream) {
  const int64_t pass_problems = band_count < shared::kNmsBandProblems ? band_count : shared::kNmsBandProblems;
  const size_t bytes = ArenaBytes<uint64_t>(pass_problems * shared::kNmsBandWords) +
                       ArenaBytes<uint64_t>(pass_problems * shared::kNmsBandRows * shared::kNmsBandWords);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  BandPass pass;
  pass.removed = arena.Take<uint64_t>(pass_problems * shared::kNmsBandWords);
  pass.mask = arena.Take<uint64_t>(pass_problems * shared::kNmsBandRows * shared::kNmsBandWords);
  const int64_t bands = (band_rows + shared::kNmsBandRows - 1) / shared::kNmsBandRows;
  for (int64_t first = 0; first < band_count; first += pass_problems) {
    pass.band_problems = a.band_problems + first;
    pass.count = band_count - first < pass_problems ? band_count - first : pass_problems;
    for (pass.band = 0; pass.band < bands; ++pass.band) {
      OPBRIDGE_RETURN_IF_ERROR(CudaError(
          cudaMemsetAsync(pass.removed, 0, sizeof(uint64_t) * pass.count * shared::kNmsBandWords, stream),
          "clearing the NMS band's removed words"));
      if (pass.band > 0) {  // the kept boxes of the earlier bands: at most all their candidates
        const int64_t kept_tiles = pass.band * shared::kNmsBandWords;
        BandKeptKernel<<<PersistentBlocks(pass.count * shared::kNmsBandWords * kept_tiles, 32), kNmsTile, 0,
                         stream>>>(a.problems, a.sorted_boxes, a.kept_boxes, a.kept_counts, rule, pass, kept_tiles);
        OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS band kernel", stream));
      }
      BandMaskKernel<<<PersistentBlocks(pass.count * shared::kNmsBandWords * shared::kNmsBandWords, 32), kNmsTile, 0,
                       stream>>>(a.problems, a.sorted_boxes, a.kept_counts, rule, pass);
      OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS band mask kernel", stream));
      BandResolveKernel<<<PersistentBlocks(pass.count, 16), kResolveThreads, 0, stream>>>(
          a.problems, a.sorted_boxes, a.sorted_positions, a.kept_positions, a.kept_boxes, a.kept_counts, pass);
      OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS band resolving kernel", stream));
    }
  }
  return Status::Ok();
}

// The figures the plan copies to the host: the mask words, pairs, band-path problems, their most
// rows, the call's candidates (PlanKernel's totals).
struct PlanFigures {
  int64_t values[5] = {};
  int64_t mask_words() const { return values[0]; }
  int64_t band_count() const { return values[2]; }
  int64_t band_rows() const { return values[3]; }
  int64_t candidates() const { return values[4]; }
};

// Step 2, once the problems are written: the plan. mask_bound: the host's bound on the call's mask
// words (shared::NmsMaskBound's over its problems), so a call whose bound fits the budget has no
// problem off the mask path. The figures come to the host where shared::NmsPlanCopied says, with
// the call's *candidates (null: every entry is one); else the candidates are `entries`.
template <class Box>
Status Plan(const Suppression<Box>& a, int64_t mask_bound, const int64_t* candidates, bool count_candidates,
            int64_t entries, PlanFigures* plan, Stream stream) {
  PlanKernel<<<1, kPlanThreads, 0, stream>>>(a.problems, a.problem_count, shared::kNmsMaskBudgetWords, candidates,
                                             a.totals, a.band_problems);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS planning kernel", stream));
  if (shared::NmsPlanCopied(mask_bound, shared::kNmsMaskBudgetWords, count_candidates, entries)) {
    OPBRIDGE_RETURN_IF_ERROR(CopyCountsToHost(a.totals, plan->values, 5, "copying the NMS plan to the host", stream));
    if (candidates == nullptr) plan->values[4] = entries;
  } else {
    plan->values[0] = mask_bound;  // no band-path problems: the bound fits the budget
    plan->values[4] = entries;     // the candidates' bound
  }
  return Status::Ok();
}

// Steps 1 (the boxes) to 4, once the plan is made and the sorted positions of the candidates are
// written (`entries` places; problem_of and candidates: see SortedBoxesKernel). Source gives each
// sorted candidate's Box, Rule decides. mask: room for mask_capacity words in the caller's block; a
// plan that needs more (past the budget's bound, known only now) takes its own.
template <class Source, class Box, class Rule>
Status SuppressPlanned(const Suppression<Box>& a, const Source& source, const Rule& rule, int64_t entries,
                       int64_t max_problems, const int64_t* problem_of, const int64_t* candidates,
                       const PlanFigures& plan, uint64_t* mask, int64_t mask_capacity, ScratchAllocator& scratch,
                       Stream stream) {
  SortedBoxesKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(source, a.problems, problem_of, candidates,
                                                                 a.sorted_positions, entries, a.sorted_boxes);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS box gathering kernel", stream));
  const int64_t mask_words = plan.mask_words();
  std::optional<ScratchBlock> own_mask;
  if (mask_words > mask_capacity) {
    const size_t bytes = ArenaBytes<uint64_t>(mask_words);
    own_mask.emplace(scratch, bytes);
    if (own_mask->data() == nullptr) return OutOfScratch(bytes);
    mask = static_cast<uint64_t*>(own_mask->data());
  }
  if (mask_words > 0) {
    MaskKernel<<<PersistentBlocks(mask_words, 32), kNmsTile, 0, stream>>>(a.problems, a.problem_count, a.totals,
                                                                         a.sorted_boxes, rule, mask);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS mask kernel", stream));
  }
  ResolveKernel<<<PersistentBlocks(max_problems, 16), kResolveThreads, 0, stream>>>(
      a.problems, a.problem_count, mask, a.sorted_positions, a.kept_positions, a.kept_counts);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS resolving kernel", stream));
  if (plan.band_count() == 0) return Status::Ok();
  return SuppressInBands(a, rule, plan.band_count(), plan.band_rows(), scratch, stream);
}

// The mask words a box list's block holds for a call whose bound is mask_bound: all of them where
// the bound fits the budget (the plan is then not copied), else none (the plan's size, taken later).
int64_t MaskInBlock(int64_t mask_bound) { return mask_bound <= shared::kNmsMaskBudgetWords ? mask_bound : 0; }

// Steps 1 (the boxes) to 4 of a box list (Nms, NmsRotated: every entry a candidate, problem 0's
// boxes), once the problems and the sorted positions are written; mask: MaskInBlock(mask_bound) words.
template <class Source, class Box, class Rule>
Status Suppress(const Suppression<Box>& a, const Source& source, const Rule& rule, int64_t entries,
                int64_t max_problems, int64_t mask_bound, uint64_t* mask, ScratchAllocator& scratch, Stream stream) {
  PlanFigures plan;
  OPBRIDGE_RETURN_IF_ERROR(Plan(a, mask_bound, nullptr, false, entries, &plan, stream));
  return SuppressPlanned(a, source, rule, entries, max_problems, nullptr, nullptr, plan, mask, MaskInBlock(mask_bound),
                         scratch, stream);
}

// What the per-(image, class) layouts' steps 1 and 2 use over all `entries` entries of `problems`
// problems, in the caller's block: the flags' ranks, each problem's run of candidates and the scan's
// storage.
struct SegmentArrays {
  int64_t* ranks;  // [entries + 1]
  int64_t* segment_begins;
  int64_t* segment_ends;
  CubStorage scan;

  static Status Bytes(int64_t entries, int64_t problems, size_t* bytes, Stream stream) {
    size_t scan_bytes = 0;
    OPBRIDGE_RETURN_IF_ERROR(NeedForScan(entries + 1, true, &scan_bytes, stream));
    *bytes = ArenaBytes<int64_t>(entries + 1) + ArenaBytes<int64_t>(problems) * 2 +
             ArenaBytes<char>(static_cast<int64_t>(scan_bytes));
    return Status::Ok();
  }
  void Carve(Arena* arena, int64_t entries, int64_t problems, size_t bytes) {
    ranks = arena->Take<int64_t>(entries + 1);
    segment_begins = arena->Take<int64_t>(problems);
    segment_ends = arena->Take<int64_t>(problems);
    scan.bytes = bytes - ArenaBytes<int64_t>(entries + 1) - ArenaBytes<int64_t>(problems) * 2;
    scan.data = arena->Take<char>(static_cast<int64_t>(scan.bytes));
  }
};

// Steps 1 to 4 of the per-(image, class) layouts: the candidates of each problem (`segment` entries
// each, the first `limit` taking part, `room` kept) packed after the problems before (a scan of
// flags over the entries), sorted by score within each problem, then suppressed. The candidates'
// arrays (a's sorted ones, which the caller reads afterwards) and the mask live in
// *candidate_block, sized by the GPU's count where the plan copies it (count_candidates: the call
// may wait for it past shared::kNmsCandidateCountEntries entries): nms.batched's ~30,000
// candidates of 1.6 M entries take some 1.5 MB there, where arrays at the entries' size took ~75 MB.
template <class Layout, class Source, class Box, class Rule>
Status SegmentedSuppress(const Layout& layout, const Source& source, const Rule& rule, int64_t problems, int64_t limit,
                         int64_t room, bool count_candidates, const SegmentArrays& s, Suppression<Box>* a,
                         std::optional<ScratchBlock>* candidate_block, ScratchAllocator& scratch, Stream stream) {
  const int64_t entries = problems * layout.segment;
  CandidateFlagsKernel<<<BlocksFor(entries + 1), kThreads, 0, stream>>>(layout, entries, s.ranks);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS candidate kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(ExclusiveSumInPlace(s.ranks, entries + 1, s.scan, stream));
  SegmentProblemsKernel<<<BlocksFor(problems), kThreads, 0, stream>>>(s.ranks, layout.segment, problems, limit, room,
                                                                      s.segment_begins, s.segment_ends, a->problems,
                                                                      a->problem_count);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS candidate kernel", stream));
  PlanFigures plan;
  const int64_t mask_bound = problems * shared::NmsMaskBound(limit);  // at most `limit` rows a problem
  OPBRIDGE_RETURN_IF_ERROR(Plan(*a, mask_bound, s.ranks + entries, count_candidates, entries, &plan, stream));
  const int64_t candidates = plan.candidates();
  // The mask the plan needs now goes in the candidates' block, unless the band path's problems make
  // it take one of its own later (SuppressInBands) — the mask itself is known here either way.
  const int64_t mask_words = plan.mask_words();
  size_t sort_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(
      cub::DeviceSegmentedSort::StableSortPairs(nullptr, sort_bytes, static_cast<const uint32_t*>(nullptr),
                                                static_cast<uint32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                                static_cast<int32_t*>(nullptr), candidates, problems, s.segment_begins,
                                                s.segment_ends, stream),
      "sizing the NMS score sort"));
  const size_t candidate_bytes = Suppression<Box>::CandidateBytes(candidates) + ArenaBytes<uint32_t>(candidates) * 2 +
                                 ArenaBytes<int32_t>(candidates) + ArenaBytes<int64_t>(candidates) +
                                 ArenaBytes<uint64_t>(mask_words) + ArenaBytes<char>(static_cast<int64_t>(sort_bytes));
  candidate_block->emplace(scratch, candidate_bytes);
  if ((*candidate_block)->data() == nullptr) return OutOfScratch(candidate_bytes);
  Arena arena((*candidate_block)->data(), candidate_bytes);
  a->CarveCandidates(&arena, candidates);
  auto* keys = arena.Take<uint32_t>(candidates);
  auto* sorted_keys = arena.Take<uint32_t>(candidates);
  auto* positions = arena.Take<int32_t>(candidates);
  auto* problem_of = arena.Take<int64_t>(candidates);
  auto* mask = arena.Take<uint64_t>(mask_words);
  auto* sort_temp = arena.Take<char>(static_cast<int64_t>(sort_bytes));
  ScatterCandidatesKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(layout, s.ranks, entries, keys, positions,
                                                                       problem_of);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS candidate kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(CudaError(
      cub::DeviceSegmentedSort::StableSortPairs(sort_temp, sort_bytes, keys, sorted_keys, positions,
                                                a->sorted_positions, candidates, problems, s.segment_begins,
                                                s.segment_ends, stream),
      "the NMS score sort"));
  // The problem of each place stays: the sort moves candidates within their problem's run only.
  return SuppressPlanned(*a, source, rule, candidates, problems, problem_of, s.ranks + entries, plan, mask, mask_words,
                         scratch, stream);
}

// The box-list NMS (Nms, NmsRotated): Source gives each candidate's box, Rule decides suppression;
// scores of T (float or half storage). One scratch request below the mask budget: the arrays, CUB's
// storage and the mask in one block.
template <class Source, class Rule, class T>
Status BoxListNms(const Source& source, const Rule& rule, const T* scores, const int64_t* categories, int64_t n,
                  const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream) {
  using Box = decltype(source.BoxOf(0, 0));
  ClearStaleError();
  int64_t* output = nullptr;
  if (n == 0) return allocate(0, &output);
  const int64_t by_category = categories != nullptr ? n : 0;  // the arrays only categories need
  // A box list's mask bound; the categories' masks together hold at most n rows of ceil(n / 64) words.
  const int64_t rows = n < shared::kNmsMaxMaskRows ? n : shared::kNmsMaxMaskRows;
  const int64_t mask_bound = categories != nullptr ? n * ((rows + kNmsTile - 1) / kNmsTile) : shared::NmsMaskBound(n);
  size_t cub_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR((NeedForSortPairs<uint32_t, int32_t>(n, 32, &cub_bytes, stream)));
  if (categories != nullptr) {
    OPBRIDGE_RETURN_IF_ERROR((NeedForSortPairs<uint64_t, int32_t>(n, 64, &cub_bytes, stream)));
    OPBRIDGE_RETURN_IF_ERROR(NeedForScan(n + 1, true, &cub_bytes, stream));
  }
  const size_t bytes = Suppression<Box>::ProblemBytes(n, n) + Suppression<Box>::CandidateBytes(n) +
                       ArenaBytes<uint32_t>(n) * 2 + ArenaBytes<int32_t>(n) + ArenaBytes<int32_t>(by_category) +
                       ArenaBytes<uint64_t>(by_category) * 2 + ArenaBytes<int64_t>(by_category + 1) +
                       ArenaBytes<int64_t>(1) + ArenaBytes<uint64_t>(MaskInBlock(mask_bound)) +
                       ArenaBytes<char>(static_cast<int64_t>(cub_bytes));
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  Suppression<Box> a;
  a.CarveProblems(&arena, n, n);
  a.CarveCandidates(&arena, n);
  auto* keys = arena.Take<uint32_t>(n);
  auto* sorted_keys = arena.Take<uint32_t>(n);
  auto* positions = arena.Take<int32_t>(n);
  auto* by_score = arena.Take<int32_t>(by_category);
  auto* category_keys = arena.Take<uint64_t>(by_category);
  auto* sorted_category_keys = arena.Take<uint64_t>(by_category);
  auto* runs = arena.Take<int64_t>(by_category + 1);
  auto* total = arena.Take<int64_t>(1);
  auto* mask = arena.Take<uint64_t>(MaskInBlock(mask_bound));
  const CubStorage cub_storage{arena.Take<char>(static_cast<int64_t>(cub_bytes)), cub_bytes};
  ScoreKeysKernel<<<BlocksFor(n), kThreads, 0, stream>>>(scores, n, keys, positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS key kernel", stream));
  if (categories == nullptr) {
    OPBRIDGE_RETURN_IF_ERROR(SortPairs(keys, sorted_keys, positions, a.sorted_positions, n, 32, cub_storage, stream));
    SingleProblemKernel<<<1, 1, 0, stream>>>(n, a.problems, a.problem_count);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS key kernel", stream));
    OPBRIDGE_RETURN_IF_ERROR(Suppress(a, source, rule, n, 1, mask_bound, mask, device_scratch, stream));
    int64_t count = 0;
    OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(a.kept_counts, &count, "copying the NMS output count to the host", stream));
    OPBRIDGE_RETURN_IF_ERROR(allocate(count, &output));
    if (count == 0) return Status::Ok();
    PositionsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(a.kept_positions, count, output);
    return LaunchStatus("the NMS output kernel", stream);
  }
  // A problem per category: the score order, then a stable sort by category, and its runs.
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(keys, sorted_keys, positions, by_score, n, 32, cub_storage, stream));
  CategoryKeysKernel<<<BlocksFor(n), kThreads, 0, stream>>>(categories, by_score, n, category_keys);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS category kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(category_keys, sorted_category_keys, by_score, a.sorted_positions, n, 64,
                                     cub_storage, stream));
  RunStartsKernel<<<BlocksFor(n + 1), kThreads, 0, stream>>>(sorted_category_keys, n, runs);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS category kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(ExclusiveSumInPlace(runs, n + 1, cub_storage, stream));
  RunBeginsKernel<<<BlocksFor(n + 1), kThreads, 0, stream>>>(runs, n, a.problems, a.problem_count);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS category kernel", stream));
  RunCountsKernel<<<BlocksFor(n), kThreads, 0, stream>>>(n, a.problem_count, a.problems);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS category kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(Suppress(a, source, rule, n, n, mask_bound, mask, device_scratch, stream));
  // The kept boxes of every category in one score order.
  UnkeptKeysKernel<<<BlocksFor(n), kThreads, 0, stream>>>(n, keys, positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS output kernel", stream));
  KeptKeysKernel<<<BlocksFor(n), kThreads, 0, stream>>>(a.problems, runs, a.kept_counts, a.kept_positions, scores, n,
                                                        keys);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS output kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(keys, sorted_keys, positions, by_score, n, 32, cub_storage, stream));
  TotalKeptKernel<<<1, kPlanThreads, 0, stream>>>(a.kept_counts, a.problem_count, total);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS output kernel", stream));
  int64_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(total, &count, "copying the NMS output count to the host", stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(count, &output));
  if (count == 0) return Status::Ok();
  PositionsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(by_score, count, output);
  return LaunchStatus("the NMS output kernel", stream);
}

// The multi-class NMS (MulticlassNms, MulticlassNmsRotated): params' score threshold and cap (its
// iou_threshold is the rule's), boxes from Source, suppression by Rule, scores of T. Two scratch
// requests: the problems' and entries' arrays, then the candidates' (SegmentedSuppress).
template <class Source, class Rule, class T>
Status MulticlassNmsOf(const MulticlassNmsParams& params, const Source& source, const Rule& rule, const T* scores,
                       int64_t batch, int64_t classes, int64_t n, const AllocateRows& allocate,
                       ScratchAllocator& device_scratch, Stream stream) {
  using Box = decltype(source.BoxOf(0, 0));
  ClearStaleError();
  int64_t* output = nullptr;
  const int64_t problems = batch * classes;
  const int64_t cap = params.max_output_boxes_per_class < 0 || params.max_output_boxes_per_class > n
                          ? n : params.max_output_boxes_per_class;
  if (problems == 0 || cap == 0) return allocate(0, &output);
  const int64_t entries = problems * n, slots = problems * cap;
  size_t segment_bytes = 0, scan_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(SegmentArrays::Bytes(entries, problems, &segment_bytes, stream));
  OPBRIDGE_RETURN_IF_ERROR(NeedForScan(problems, false, &scan_bytes, stream));
  const size_t bytes = Suppression<Box>::ProblemBytes(problems, slots) + ArenaBytes<int64_t>(problems) +
                       ArenaBytes<int64_t>(1) + ArenaBytes<char>(static_cast<int64_t>(scan_bytes)) + segment_bytes;
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  Suppression<Box> a;
  a.CarveProblems(&arena, problems, slots);
  auto* offsets = arena.Take<int64_t>(problems);
  auto* total = arena.Take<int64_t>(1);
  const CubStorage row_scan{arena.Take<char>(static_cast<int64_t>(scan_bytes)), scan_bytes};
  SegmentArrays segments;
  segments.Carve(&arena, entries, problems, segment_bytes);
  const shared::MulticlassLayout<T> layout{scores, n, params.score_threshold};
  std::optional<ScratchBlock> candidate_block;
  OPBRIDGE_RETURN_IF_ERROR(SegmentedSuppress(layout, source, rule, problems, n, cap, true, segments, &a,
                                             &candidate_block, device_scratch, stream));
  OPBRIDGE_RETURN_IF_ERROR(ExclusiveSum(a.kept_counts, offsets, problems, row_scan, stream));
  TotalKernel<<<1, 1, 0, stream>>>(offsets, a.kept_counts, problems, total);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS row count kernel", stream));
  int64_t rows = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(total, &rows, "copying the NMS output count to the host", stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(rows, &output));
  if (rows == 0) return Status::Ok();
  SelectedRowsKernel<<<BlocksFor(slots), kThreads, 0, stream>>>(a.kept_positions, a.kept_counts, offsets, classes, cap,
                                                                 slots, output);
  return LaunchStatus("the NMS output kernel", stream);
}

// TensorRT's batched NMS, axis-aligned or rotated: boxes from Source, suppression by Rule. Two
// scratch requests, as MulticlassNmsOf's. T: the storage type of boxes, scores and dets.
template <class Source, class Rule, class T>
Status TrtBatchedNmsOf(const TrtBatchedNmsParams& params, const Source& source, const Rule& rule, const T* boxes,
                       int64_t loc_classes, const T* scores, int64_t batch, int64_t num_boxes, int64_t classes,
                       T* dets, int32_t* labels, int32_t* index, ScratchAllocator& device_scratch, Stream stream) {
  using Box = decltype(source.BoxOf(0, 0));
  ClearStaleError();
  const int64_t keep = params.keep_topk, rows = batch * keep;
  if (rows == 0) return Status::Ok();
  TrtDefaultsKernel<<<BlocksFor(rows), kThreads, 0, stream>>>(rows, params.rotated ? 6 : 5, dets, labels, index);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS output kernel", stream));
  if (num_boxes == 0 || classes == 0) return Status::Ok();
  const int64_t problems = batch * classes, entries = problems * num_boxes;
  const int64_t top_k = params.topk > 0 && params.topk <= num_boxes ? params.topk : num_boxes;
  // A class contributes at most keep_topk detections to its image: it keeps at most that many.
  const int64_t capacity = keep < top_k ? keep : top_k, merged = problems * capacity;
  const int merge_bits = 32 + BitsFor(batch);
  size_t segment_bytes = 0, sort_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(SegmentArrays::Bytes(entries, problems, &segment_bytes, stream));
  OPBRIDGE_RETURN_IF_ERROR((NeedForSortPairs<uint64_t, int64_t>(merged, merge_bits, &sort_bytes, stream)));
  const size_t bytes = Suppression<Box>::ProblemBytes(problems, merged) + ArenaBytes<uint64_t>(merged) * 2 +
                       ArenaBytes<int64_t>(merged) * 2 + ArenaBytes<char>(static_cast<int64_t>(sort_bytes)) +
                       segment_bytes;
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  Suppression<Box> a;
  a.CarveProblems(&arena, problems, merged);
  auto* merge_keys = arena.Take<uint64_t>(merged);
  auto* merged_keys = arena.Take<uint64_t>(merged);
  auto* merge_entries = arena.Take<int64_t>(merged);
  auto* merged_entries = arena.Take<int64_t>(merged);
  const CubStorage merge_sort{arena.Take<char>(static_cast<int64_t>(sort_bytes)), sort_bytes};
  SegmentArrays segments;
  segments.Carve(&arena, entries, problems, segment_bytes);
  const shared::TrtLayout<T> layout{scores, num_boxes, classes, params.background_label_id, params.score_threshold};
  std::optional<ScratchBlock> candidate_block;
  OPBRIDGE_RETURN_IF_ERROR(SegmentedSuppress(layout, source, rule, problems, top_k, capacity, false, segments, &a,
                                             &candidate_block, device_scratch, stream));
  MergeKeysKernel<<<BlocksFor(merged), kThreads, 0, stream>>>(scores, num_boxes, classes, capacity, a.kept_counts,
                                                             a.kept_positions, merged, merge_keys, merge_entries);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS merge kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(
      SortPairs(merge_keys, merged_keys, merge_entries, merged_entries, merged, merge_bits, merge_sort, stream));
  const int64_t per_image = keep < classes * capacity ? keep : classes * capacity;
  TrtDetectionsKernel<<<BlocksFor(batch * per_image), kThreads, 0, stream>>>(
      params, boxes, loc_classes, scores, num_boxes, classes, capacity, a.kept_positions, merged_keys, merged_entries,
      per_image, batch * per_image, dets, labels, index);
  return LaunchStatus("the batched NMS output kernel", stream);
}

}  // namespace

template <class T>
Status Nms(const NmsParams& params, const T* boxes, const T* scores, const int64_t* categories, int64_t n,
           const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream) {
  const float offset = static_cast<float>(params.offset);
  return BoxListNms(shared::NmsBoxSource<T>{boxes, 1, 0, 0, 4, offset},
                    shared::TorchvisionRule{offset, params.iou_threshold}, scores, categories, n, allocate,
                    device_scratch, stream);
}

template <class T>
Status NmsRotated(const NmsRotatedParams& params, const T* boxes, const T* scores, const int64_t* categories,
                  int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream) {
  const shared::RotatedNmsConvention& mmcv = shared::kMmcvNmsRotated;
  return BoxListNms(shared::RotatedBoxSource<T>{boxes, 1, 0, 0, 5, params.clockwise, mmcv.min_area},
                    shared::RotatedNmsRule{params.iou_threshold, mmcv.inclusive}, scores, categories, n, allocate,
                    device_scratch, stream);
}

template <class T>
Status MulticlassNms(const MulticlassNmsParams& params, const T* boxes, const T* scores, int64_t batch,
                     int64_t classes, int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch,
                     Stream stream) {
  return MulticlassNmsOf(params, shared::NmsBoxSource<T>{boxes, classes, n * 4, 0, 4, 0.0f},
                         shared::TorchvisionRule{0.0f, params.iou_threshold}, scores, batch, classes, n, allocate,
                         device_scratch, stream);
}

template <class T>
Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const T* boxes, const T* scores,
                            int64_t batch, int64_t classes, int64_t n, const AllocateRows& allocate,
                            ScratchAllocator& device_scratch, Stream stream) {
  // Every candidate may be kept (no cap), as cpu::MulticlassNmsRotated.
  const shared::RotatedNmsConvention& mmdeploy = shared::kMmdeployNmsRotated;
  MulticlassNmsParams p;
  p.iou_threshold = params.iou_threshold;
  p.score_threshold = params.score_threshold;
  p.max_output_boxes_per_class = -1;
  return MulticlassNmsOf(p, shared::RotatedBoxSource<T>{boxes, classes, n * 5, 0, 5, true, mmdeploy.min_area},
                         shared::RotatedNmsRule{params.iou_threshold, mmdeploy.inclusive}, scores, batch, classes, n,
                         allocate, device_scratch, stream);
}

template <class T>
Status TrtBatchedNms(const TrtBatchedNmsParams& params, const T* boxes, int64_t loc_classes, const T* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, T* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& device_scratch, Stream stream) {
  if (!params.rotated) {
    const shared::NmsBoxSource<T> source{boxes, classes, num_boxes * loc_classes * 4, loc_classes == 1 ? 0 : 4,
                                         loc_classes * 4, 0.0f};
    return TrtBatchedNmsOf(params, source, shared::TorchvisionRule{0.0f, params.iou_threshold}, boxes, loc_classes,
                           scores, batch, num_boxes, classes, dets, labels, index, device_scratch, stream);
  }
  const shared::RotatedNmsConvention& plugin = shared::kTrtBatchedRotatedNms;
  const shared::RotatedBoxSource<T> source{boxes, classes, num_boxes * loc_classes * 5, loc_classes == 1 ? 0 : 5,
                                           loc_classes * 5, true, plugin.min_area};
  return TrtBatchedNmsOf(params, source, shared::RotatedNmsRule{params.iou_threshold, plugin.inclusive}, boxes,
                         loc_classes, scores, batch, num_boxes, classes, dets, labels, index, device_scratch, stream);
}

template <class T>
Status NmsMatch(const NmsMatchParams& params, const T* boxes, const T* scores, int64_t batch, int64_t classes,
                int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  int64_t* output = nullptr;
  const int64_t problems = batch * classes, entries = problems * n;
  if (entries == 0) return allocate(0, &output);
  size_t segment_bytes = 0, scan_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(SegmentArrays::Bytes(entries, problems, &segment_bytes, stream));
  OPBRIDGE_RETURN_IF_ERROR(NeedForScan(entries, false, &scan_bytes, stream));
  const size_t bytes = Suppression<NmsBox>::ProblemBytes(problems, entries) + ArenaBytes<uint8_t>(entries) +
                       ArenaBytes<int32_t>(entries) + ArenaBytes<unsigned long long>(entries) +
                       ArenaBytes<int64_t>(entries) + ArenaBytes<int64_t>(1) +
                       ArenaBytes<char>(static_cast<int64_t>(scan_bytes)) + segment_bytes;
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  Suppression<NmsBox> a;
  a.CarveProblems(&arena, problems, entries);
  auto* kept = arena.Take<uint8_t>(entries);
  auto* first = arena.Take<int32_t>(entries);
  auto* counts = arena.Take<unsigned long long>(entries);
  auto* offsets = arena.Take<int64_t>(entries);
  auto* total = arena.Take<int64_t>(1);
  const CubStorage row_scan{arena.Take<char>(static_cast<int64_t>(scan_bytes)), scan_bytes};
  SegmentArrays segments;
  segments.Carve(&arena, entries, problems, segment_bytes);
  // Every box of every problem, in processing order (the candidates' places are the entries'):
  // suppression with mmdeploy's rule, no cap.
  const shared::NmsBoxSource<T> source{boxes, classes, n * 4, 0, 4, 0.0f};
  const shared::MatchRule rule{params.iou_threshold};
  std::optional<ScratchBlock> candidate_block;
  OPBRIDGE_RETURN_IF_ERROR(SegmentedSuppress(shared::MatchLayout<T>{scores, n}, source, rule, problems, n, n, false,
                                             segments, &a, &candidate_block, device_scratch, stream));
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(kept, 0, static_cast<size_t>(entries), stream),
                                     "clearing the NMSMatch flags"));
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(counts, 0, static_cast<size_t>(entries) * sizeof(*counts), stream),
                                     "clearing the NMSMatch counts"));
  MatchKeptFlagsKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(a.kept_positions, a.kept_counts, n, entries, kept);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMSMatch kept kernel", stream));
  FirstSuppressorKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(a.sorted_boxes, a.sorted_positions, kept, rule,
                                                                    scores, params.score_threshold, n, entries, first,
                                                                    counts);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMSMatch suppressor kernel", stream));
  // The rows' offsets: an exclusive scan of the counts in problem, then processing order. The counts
  // (unsigned for atomicAdd) are below 2^63, so read as int64 they are the same numbers, and the scan
  // is the one the other ops' row scans instantiate.
  OPBRIDGE_RETURN_IF_ERROR(ExclusiveSum(reinterpret_cast<int64_t*>(counts), offsets, entries, row_scan, stream));
  MatchTotalKernel<<<1, 1, 0, stream>>>(offsets, counts, entries, total);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMSMatch row count kernel", stream));
  int64_t rows = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(total, &rows, "copying the NMSMatch output count to the host", stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(rows, &output));
  if (rows == 0) return Status::Ok();
  MatchRowsKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(a.sorted_positions, first, counts, offsets, n, classes,
                                                              entries, output);
  return LaunchStatus("the NMSMatch output kernel", stream);
}

#define OPBRIDGE_NMS(T)                                                                                         \
  template Status Nms<T>(const NmsParams&, const T*, const T*, const int64_t*, int64_t, const AllocateRows&,     \
                         ScratchAllocator&, Stream);                                                           \
  template Status MulticlassNms<T>(const MulticlassNmsParams&, const T*, const T*, int64_t, int64_t, int64_t,     \
                                   const AllocateRows&, ScratchAllocator&, Stream);                             \
  template Status NmsRotated<T>(const NmsRotatedParams&, const T*, const T*, const int64_t*, int64_t,            \
                                const AllocateRows&, ScratchAllocator&, Stream);                               \
  template Status MulticlassNmsRotated<T>(const MulticlassNmsRotatedParams&, const T*, const T*, int64_t, int64_t, \
                                          int64_t, const AllocateRows&, ScratchAllocator&, Stream);              \
  template Status NmsMatch<T>(const NmsMatchParams&, const T*, const T*, int64_t, int64_t, int64_t,             \
                              const AllocateRows&, ScratchAllocator&, Stream);                                 \
  template Status TrtBatchedNms<T>(const TrtBatchedNmsParams&, const T*, int64_t, const T*, int64_t, int64_t,     \
                                   int64_t, T*, int32_t*, int32_t*, ScratchAllocator&, Stream);
OPBRIDGE_NMS(float)
OPBRIDGE_NMS(shared::Float16)
OPBRIDGE_NMS(shared::BFloat16)
#undef OPBRIDGE_NMS

}  // namespace opbridge::cuda
