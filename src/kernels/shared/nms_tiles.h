// Greedy NMS in tiles, the CUDA kernels' algorithm, as host-and-device steps (kernels/cuda/nms.cu
// runs them in a thread block; the CPU tests run them on the host against the CPU kernels).
//
// The candidates of one problem (a box list, one category set, one image and class) come sorted
// by score. A block of kNmsTile threads takes them a tile at a time: each thread tests its
// candidate against the boxes kept from earlier tiles (SuppressedByKept) and computes which later
// candidates of its tile it would suppress (TileMaskWord, a kNmsTile x kNmsTile bit matrix); one
// thread then resolves the tile in order (ResolveTile): a candidate is kept unless an earlier kept
// one suppresses it, the textbook greedy loop, so the kept boxes are exactly the CPU engine's
// (greedy_nms.h, which skips only pairs its geometry proves cannot suppress). Kept boxes are
// appended to the problem's list; the block stops when the problem's cap is reached.
#pragma once

#include <stdint.h>

#include "kernels/shared/host_device.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::shared {

constexpr int kNmsTile = 256;  // candidates per tile, and threads per block
constexpr int kNmsTileWords = kNmsTile / 32;

// Where the problems' boxes are and what suppresses. Problem p is image p / classes, class
// p % classes; its box at `position` starts at boxes + (p / classes) * image_stride +
// (p % classes) * class_stride + position * box_stride (floats). A box list is one problem
// (classes 1, strides 0 but box_stride).
struct NmsProblems {
  const float* boxes;
  int64_t classes, image_stride, class_stride, box_stride;
  const int64_t* categories;  // per box position, or null; boxes of two categories never suppress
  float offset, threshold;
};

// A candidate as the tiles hold it.
struct NmsCandidate {
  NmsBox box;
  int64_t category;
  int32_t position;
};

OPBRIDGE_HD inline NmsCandidate LoadCandidate(const NmsProblems& s, int64_t problem, int32_t position) {
  const float* box = s.boxes + (problem / s.classes) * s.image_stride + (problem % s.classes) * s.class_stride +
                     static_cast<int64_t>(position) * s.box_stride;
  return {MakeNmsBox(box, s.offset), s.categories != nullptr ? s.categories[position] : 0, position};
}

OPBRIDGE_HD inline bool Suppresses(const NmsProblems& s, const NmsCandidate& kept, const NmsCandidate& later) {
  return kept.category == later.category && TorchvisionSuppresses(kept.box, later.box, s.offset, s.threshold);
}

// Whether a kept box of the earlier tiles suppresses candidate c.
OPBRIDGE_HD inline bool SuppressedByKept(const NmsProblems& s, const NmsCandidate* kept, int64_t kept_count,
                                         const NmsCandidate& c) {
  for (int64_t k = 0; k < kept_count; ++k) {
    if (Suppresses(s, kept[k], c)) return true;
  }
  return false;
}

// Bits u - 32 * word (u in [32 * word, 32 * word + 32)) of tile candidate t's row: set where
// t would suppress the later candidate u (u > t, u < count).
OPBRIDGE_HD inline uint32_t TileMaskWord(const NmsProblems& s, const NmsCandidate* tile, int count, int t, int word) {
  uint32_t bits = 0;
  for (int b = 0; b < 32; ++b) {
    const int u = word * 32 + b;
    if (u > t && u < count && Suppresses(s, tile[t], tile[u])) bits |= 1u << b;
  }
  return bits;
}

// The greedy loop over one tile of `count` candidates: suppressed[u] says an earlier tile's kept
// box suppresses u; mask[t * kNmsTileWords + w] are t's rows. Writes the tile indices of the kept
// candidates, in order, to chosen (at most `room`); returns how many.
OPBRIDGE_HD inline int ResolveTile(const uint32_t* mask, const uint8_t* suppressed, int count, int64_t room,
                                   int16_t* chosen) {
  uint32_t removed[kNmsTileWords] = {};
  int kept = 0;
  for (int u = 0; u < count && kept < room; ++u) {
    if (suppressed[u] || (removed[u / 32] >> (u % 32)) & 1u) continue;
    chosen[kept++] = static_cast<int16_t>(u);
    for (int w = 0; w < kNmsTileWords; ++w) removed[w] |= mask[u * kNmsTileWords + w];
  }
  return kept;
}

// How many of a problem's `length` sorted keys (low 32 bits: DescendingScoreKey, or
// kNotACandidate, which sorts last) are candidates.
OPBRIDGE_HD inline int64_t CountCandidates(const uint64_t* keys, int64_t length) {
  int64_t low = 0, high = length;  // the first key that is not a candidate, by bisection
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    if (static_cast<uint32_t>(keys[mid]) == kNotACandidate) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return low;
}

}  // namespace opbridge::shared
