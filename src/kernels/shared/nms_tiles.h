// Greedy NMS in tiles of 64 candidates, the CUDA kernels' algorithm, as host-and-device steps
// (kernels/cuda/nms.cu runs them on the GPU; the CPU tests run them on the host against the CPU
// kernels, tests/cpp/nms_device_code.h).
//
// Every op first turns its input into problems: the candidates of one box list, category, or image
// and class, sorted by score (ties by index). A problem's candidates, in that order, are its rows.
//
// The suppression mask. Row i's word c holds a bit for each candidate j of column tile c (j in
// [64c, 64c + 64)): set where i, if kept, suppresses j (j > i). One grid-wide launch computes every
// word of every problem (NmsMaskWord, a thread per row and column tile), so all SMs work at once.
// Then one thread block per problem resolves it a tile at a time (ResolveTileBits): the candidates
// of tile t not removed by the kept ones of earlier tiles (`removed`, word t) are taken in order, each
// kept unless a kept one of the same tile suppresses it (its row's word t), the textbook greedy loop,
// stopping at the problem's cap; then the block ORs the kept rows' later words into `removed`, a word
// per thread. The kept boxes are exactly the CPU engine's (greedy_nms.h), in its order.
//
// The mask has rows x ceil(rows / 64) words per problem. Problems whose masks do not fit (more than
// kNmsMaxMaskRows candidates, or beyond kNmsMaskBudgetWords for the launch) take the band path
// instead: their candidates a band of kNmsBandRows at a time, each band (1) tested against the kept
// boxes of the earlier bands, a candidate tile against a kept tile per block over the whole GPU
// (SuppressedByKept: a removed word per candidate tile), (2) given its own mask, grid-wide as
// above, and (3) resolved by a block per problem as above, starting from the removed words and the
// kept count of the earlier bands. Memory: kNmsBandBytes a problem of a pass, whatever its size; the
// greedy order is the mask path's, so the kept boxes are the same.
#pragma once

#include <stdint.h>

#include "core/host_device.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::shared {

constexpr int kNmsTile = 64;                               // candidates per tile: a 64-bit word
constexpr int64_t kNmsMaxMaskWords = 1024;                 // words per row the resolving block holds
constexpr int64_t kNmsMaxMaskRows = kNmsMaxMaskWords * kNmsTile;  // 65,536 candidates
constexpr int64_t kNmsMaskBudgetWords = int64_t{32} << 20;        // 256 MiB of mask per call
constexpr int64_t kNmsBandWords = 64;                             // words per row of a band's mask
constexpr int64_t kNmsBandRows = kNmsBandWords * kNmsTile;        // 4,096 candidates a band
// Entries past which a multi-class NMS call (MulticlassNms, MulticlassNmsRotated: they wait for their
// output's size anyway) learns the candidates' count before allocating their arrays (some 40 bytes
// each, and the sort's storage): below, the arrays take at most ~40 MB at the entries' bound, and the
// copy's synchronization would cost more than it saves. Calls whose mask bound exceeds the budget
// (nms.batched's 80 x 20,000) copy the plan anyway and get the count with it; TensorRT's batched NMS
// (static outputs) and NMSMatch (every entry a candidate) never copy it for that.
constexpr int64_t kNmsCandidateCountEntries = int64_t{1} << 20;
constexpr int64_t kNmsBandBytes = kNmsBandRows * kNmsBandWords * 8 + kNmsBandWords * 8;  // mask + removed
constexpr int64_t kNmsBandProblems = 64;                          // band-path problems a pass: 128 MiB

// One problem of a call, as the planning step (PlanNmsProblems) leaves it.
struct NmsProblem {
  int64_t begin;       // its first candidate in the sorted arrays (positions, boxes)
  int64_t count;       // candidates taking part (rows)
  int64_t kept_begin;  // its first slot in the kept arrays
  int64_t kept_room;   // the most it keeps (its cap)
  int64_t words;       // ceil(count / kNmsTile)
  int64_t mask_begin;  // its first mask word (mask path)
  int64_t pair_begin;  // its first (row tile, column tile) pair of the mask launch (mask path)
  int32_t uses_mask;   // 1: the mask path; 0: the band path
};

// The most candidates a problem keeps: its cap, or all of them.
OPBRIDGE_HD inline int64_t KeptRoom(const NmsProblem& p) { return Min(p.count, p.kept_room); }

OPBRIDGE_HD inline int CountTrailingZeros(uint64_t bits) {  // bits != 0
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(bits)) - 1;
#else
  return __builtin_ctzll(bits);
#endif
}

OPBRIDGE_HD inline int PopCount(uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __popcll(bits);
#else
  return __builtin_popcountll(bits);
#endif
}

// The low `count` bits (count in [0, 64]).
OPBRIDGE_HD inline uint64_t LowBits(int count) { return count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1; }

// Word `column` of row i: bit b set where candidate i suppresses candidate j = 64 * column + b, for j
// > i and j < rows. columns: the boxes of that column tile (column_boxes[b] is candidate j's).
// suppresses(kept, later): the op's rule (TorchvisionRule for axis-aligned boxes, RotatedNmsRule).
template <class Box, class Rule>
OPBRIDGE_HD inline uint64_t NmsMaskWord(const Box& row_box, int64_t i, const Box* column_boxes, int64_t column,
                                        int64_t rows, const Rule& suppresses) {
  const int64_t first = column * kNmsTile;
  const int count = static_cast<int>(Min<int64_t>(kNmsTile, rows - first));
  uint64_t bits = 0;
  for (int b = 0; b < count; ++b) {
    if (first + b > i && suppresses(row_box, column_boxes[b])) bits |= uint64_t{1} << b;
  }
  return bits;
}

// The greedy loop over one tile of `count` candidates: `removed` has the bits of those an earlier
// tile's kept candidates suppress; diag[u] is candidate u's word of this tile (the later ones of the
// tile it suppresses). Takes the candidates in order, keeping each that is not removed, at most
// `room` of them; returns the kept ones' bits.
OPBRIDGE_HD inline uint64_t ResolveTileBits(uint64_t removed, const uint64_t* diag, int count, int64_t room) {
  uint64_t alive = LowBits(count) & ~removed;  // not removed, not yet taken
  uint64_t kept = 0;
  for (int64_t taken = 0; alive != 0 && taken < room; ++taken) {
    const int u = CountTrailingZeros(alive);  // every earlier candidate is taken or removed
    kept |= uint64_t{1} << u;
    alive &= ~diag[u] & ~(uint64_t{1} << u);
  }
  return kept;
}

// Where kept candidate u of a tile whose kept bits are `kept` goes among the tile's kept ones.
OPBRIDGE_HD inline int KeptRank(uint64_t kept, int u) { return PopCount(kept & LowBits(u)); }

// The OR of word w of the kept rows of tile t: the later candidates they remove. mask: the problem's
// rows of `words` words.
// The rows' words are loaded eight at a time before any is used, so that on the GPU eight loads are
// in flight together instead of one latency per kept row (nms.single keeps some 10 a tile): an OR,
// the same word in any order.
OPBRIDGE_HD inline uint64_t KeptRowsWord(const uint64_t* mask, int64_t words, int64_t t, uint64_t kept, int64_t w) {
  constexpr int kInFlight = 8;
  uint64_t removed = 0;
  for (uint64_t bits = kept; bits != 0;) {
    uint64_t row_words[kInFlight];
    for (int r = 0; r < kInFlight; ++r) {  // unrolled by the compiler: a fixed count, predicated loads
      row_words[r] = bits != 0 ? mask[(t * kNmsTile + CountTrailingZeros(bits)) * words + w] : 0;
      bits &= bits - 1;  // 0 stays 0
    }
    for (int r = 0; r < kInFlight; ++r) removed |= row_words[r];
  }
  return removed;
}

// The band path's test of one candidate against kept boxes kept[0 .. count) (a kept tile of a problem).
template <class Box, class Rule>
OPBRIDGE_HD inline bool SuppressedByKept(const Box* kept, int64_t count, const Box& box, const Rule& suppresses) {
  for (int64_t k = 0; k < count; ++k) {
    if (suppresses(kept[k], box)) return true;
  }
  return false;
}

// A problem's mask words if it can take the mask path at all (at most kNmsMaxMaskRows rows), else 0.
OPBRIDGE_HD inline int64_t NmsMaskSize(int64_t rows) {
  return rows <= kNmsMaxMaskRows ? rows * ((rows + kNmsTile - 1) / kNmsTile) : 0;
}

// The mask words a problem of at most `rows` candidates can need (past kNmsMaxMaskRows: as many as
// kNmsMaxMaskRows take, so that a call's bound exceeds the budget where a problem may take the band
// path).
OPBRIDGE_HD inline int64_t NmsMaskBound(int64_t rows) {
  return NmsMaskSize(rows < kNmsMaxMaskRows ? rows : kNmsMaxMaskRows);
}

// Whether a call's plan comes to the host (one copy, one synchronization): where its mask bound would
// take more than the budget (the mask is then allocated as the plan needs it, and the band path learns
// its problems), or where a call that may wait for its candidates' count (count_candidates) has more
// than kNmsCandidateCountEntries entries. Else the mask is allocated at the bound and the candidates'
// arrays at the entries.
OPBRIDGE_HD inline bool NmsPlanCopied(int64_t mask_bound, int64_t budget_words, bool count_candidates,
                                      int64_t entries) {
  return mask_bound > budget_words || (count_candidates && entries > kNmsCandidateCountEntries);
}

// The plan of a call's problems (their begin, count, kept_begin and kept_room set): each problem's
// words, and for those on the mask path their mask_begin and pair_begin (every (row tile, column tile)
// pair; the mask launch skips the lower ones). A problem takes the mask path when it can
// (NmsMaskSize) and the masks of it and every earlier problem (those that can) fit in budget_words:
// a prefix rule, which the CUDA kernel computes with block-wide scans (integer sums: the same in any
// order). Returns the call's mask words and pairs through *mask_words and *pairs.
OPBRIDGE_HD inline void PlanNmsProblems(NmsProblem* problems, int64_t count, int64_t budget_words, int64_t* mask_words,
                                        int64_t* pairs) {
  int64_t end = 0, words_used = 0, pairs_used = 0;
  for (int64_t p = 0; p < count; ++p) {
    NmsProblem& problem = problems[p];
    problem.words = (problem.count + kNmsTile - 1) / kNmsTile;
    const int64_t size = NmsMaskSize(problem.count);
    end += size;
    problem.uses_mask = problem.count <= kNmsMaxMaskRows && end <= budget_words;
    problem.mask_begin = end - size;
    problem.pair_begin = pairs_used;
    if (problem.uses_mask) {
      words_used = end;
      pairs_used += problem.words * problem.words;
    }
  }
  *mask_words = words_used;
  *pairs = pairs_used;
}

}  // namespace opbridge::shared
