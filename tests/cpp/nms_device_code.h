// The CUDA NMS kernels' steps (kernels/cuda/nms.cu), run on the host: the same host-and-device
// functions (kernels/shared/nms_tiles.h, nms_layouts.h) in the kernels' order, the thread block's
// phases one after another, and CUB's stable radix sort as a stable sort by key. The tests compare
// what they give with the CPU kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/nms.h"
#include "core/trt_batched_nms.h"
#include "kernels/shared/nms_layouts.h"
#include "kernels/shared/nms_tiles.h"

namespace opbridge::testing {

// CUB's DeviceRadixSort::SortPairs: ascending keys, stable.
template <class Key, class Value>
void SortPairsOnHost(std::vector<Key>* keys, std::vector<Value>* values) {
  std::vector<size_t> order(keys->size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*keys)[a] < (*keys)[b]; });
  std::vector<Key> sorted_keys;
  std::vector<Value> sorted_values;
  for (size_t i : order) {
    sorted_keys.push_back((*keys)[i]);
    sorted_values.push_back((*values)[i]);
  }
  *keys = sorted_keys;
  *values = sorted_values;
}

// GreedyKernel: per problem, tiles of kNmsTile candidates, each phase for every "thread".
inline void GreedyOnHost(const shared::NmsProblems& s, const std::vector<int32_t>& sorted_positions, int64_t segment,
                         const std::vector<int64_t>* taking_part, int64_t problems, int64_t kept_capacity,
                         std::vector<shared::NmsCandidate>* kept, std::vector<int64_t>* kept_counts) {
  using shared::kNmsTile;
  using shared::kNmsTileWords;
  kept->assign(static_cast<size_t>(problems * kept_capacity), shared::NmsCandidate{});
  kept_counts->assign(static_cast<size_t>(problems), 0);
  for (int64_t p = 0; p < problems; ++p) {
    const int64_t count = taking_part != nullptr ? (*taking_part)[p] : segment;
    const int32_t* positions = sorted_positions.data() + p * segment;
    shared::NmsCandidate* problem_kept = kept->data() + p * kept_capacity;
    const int64_t room = std::min(count, kept_capacity);
    int64_t kept_count = 0;
    for (int64_t start = 0; start < count && kept_count < room; start += kNmsTile) {
      const int in_tile = static_cast<int>(std::min<int64_t>(count - start, kNmsTile));
      shared::NmsCandidate tile[kNmsTile];
      uint8_t suppressed[kNmsTile];
      uint32_t mask[kNmsTile * kNmsTileWords];
      int16_t chosen[kNmsTile];
      for (int t = 0; t < in_tile; ++t) {
        tile[t] = shared::LoadCandidate(s, p, positions[start + t]);
        suppressed[t] = shared::SuppressedByKept(s, problem_kept, kept_count, tile[t]);
      }
      for (int t = 0; t < in_tile; ++t) {
        for (int w = 0; w < kNmsTileWords; ++w) {
          mask[t * kNmsTileWords + w] = suppressed[t] ? 0u : shared::TileMaskWord(s, tile, in_tile, t, w);
        }
      }
      const int added = shared::ResolveTile(mask, suppressed, in_tile, room - kept_count, chosen);
      for (int k = 0; k < added; ++k) problem_kept[kept_count + k] = tile[chosen[k]];
      kept_count += added;
    }
    (*kept_counts)[p] = kept_count;
  }
}

// cuda::Nms: the kept indices.
inline std::vector<int64_t> NmsOnHost(const NmsParams& params, const std::vector<float>& boxes,
                                      const std::vector<float>& scores, const int64_t* categories) {
  const int64_t n = static_cast<int64_t>(scores.size());
  std::vector<uint32_t> keys(n);
  std::vector<int32_t> positions(n);
  for (int64_t i = 0; i < n; ++i) {
    keys[i] = shared::DescendingScoreKey(scores[i]);
    positions[i] = static_cast<int32_t>(i);
  }
  SortPairsOnHost(&keys, &positions);
  const shared::NmsProblems s{boxes.data(), 1, 0, 0, 4, categories, static_cast<float>(params.offset),
                              params.iou_threshold};
  std::vector<shared::NmsCandidate> kept;
  std::vector<int64_t> counts;
  GreedyOnHost(s, positions, n, nullptr, 1, n, &kept, &counts);
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < (n > 0 ? counts[0] : 0); ++k) keep.push_back(kept[k].position);
  return keep;
}

// cuda::MulticlassNms: the [rows, 3] rows, flattened.
inline std::vector<int64_t> MulticlassNmsOnHost(const MulticlassNmsParams& params, const std::vector<float>& boxes,
                                                const std::vector<float>& scores, int64_t batch, int64_t classes,
                                                int64_t n) {
  const int64_t problems = batch * classes, entries = problems * n;
  const int64_t cap = params.max_output_boxes_per_class < 0 || params.max_output_boxes_per_class > n
                          ? n : params.max_output_boxes_per_class;
  std::vector<int64_t> rows;
  if (problems == 0 || cap == 0) return rows;
  std::vector<uint64_t> keys(entries);
  std::vector<int32_t> positions(entries);
  for (int64_t i = 0; i < entries; ++i) {
    keys[i] = shared::MulticlassNmsKey(scores.data(), n, params.score_threshold, i);
    positions[i] = static_cast<int32_t>(i % n);
  }
  SortPairsOnHost(&keys, &positions);
  std::vector<int64_t> taking_part(problems);
  for (int64_t p = 0; p < problems; ++p) taking_part[p] = shared::CountCandidates(keys.data() + p * n, n);
  const shared::NmsProblems s{boxes.data(), classes, n * 4, 0, 4, nullptr, 0.0f, params.iou_threshold};
  std::vector<shared::NmsCandidate> kept;
  std::vector<int64_t> counts;
  GreedyOnHost(s, positions, n, &taking_part, problems, cap, &kept, &counts);
  for (int64_t p = 0; p < problems; ++p) {
    for (int64_t k = 0; k < counts[p]; ++k) rows.insert(rows.end(), {p / classes, p % classes, kept[p * cap + k].position});
  }
  return rows;
}

// cuda::TrtBatchedNms: dets, labels and index (outputs as the kernel leaves them).
struct TrtOutputs {
  std::vector<float> dets;
  std::vector<int32_t> labels, index;
};

inline TrtOutputs TrtBatchedNmsOnHost(const TrtBatchedNmsParams& params, const std::vector<float>& boxes,
                                      int64_t loc_classes, const std::vector<float>& scores, int64_t batch,
                                      int64_t num_boxes, int64_t classes) {
  const int64_t keep = params.keep_topk, rows = batch * keep;
  TrtOutputs out{std::vector<float>(rows * 5, 0.0f), std::vector<int32_t>(rows, -1), std::vector<int32_t>(rows, -1)};
  if (rows == 0 || num_boxes == 0 || classes == 0) return out;
  const int64_t problems = batch * classes, entries = problems * num_boxes;
  const int64_t top_k = params.topk > 0 && params.topk <= num_boxes ? params.topk : num_boxes;
  const int64_t capacity = std::min(keep, top_k), merged = problems * capacity;
  std::vector<uint64_t> keys(entries);
  std::vector<int32_t> positions(entries);
  for (int64_t i = 0; i < entries; ++i) {
    keys[i] = shared::TrtBatchedNmsKey(params, scores.data(), num_boxes, classes, i);
    positions[i] = static_cast<int32_t>((i / classes) % num_boxes);
  }
  SortPairsOnHost(&keys, &positions);
  std::vector<int64_t> taking_part(problems);
  for (int64_t p = 0; p < problems; ++p) {
    taking_part[p] = std::min(shared::CountCandidates(keys.data() + p * num_boxes, num_boxes), top_k);
  }
  const shared::NmsProblems s{boxes.data(), classes, num_boxes * loc_classes * 4, loc_classes == 1 ? 0 : 4,
                              loc_classes * 4, nullptr, 0.0f, params.iou_threshold};
  std::vector<shared::NmsCandidate> kept;
  std::vector<int64_t> counts;
  GreedyOnHost(s, positions, num_boxes, &taking_part, problems, capacity, &kept, &counts);
  std::vector<int32_t> kept_positions(merged);
  for (int64_t e = 0; e < merged; ++e) kept_positions[e] = kept[e].position;
  std::vector<uint64_t> merge_keys(merged);
  std::vector<int64_t> entries_of(merged);
  for (int64_t e = 0; e < merged; ++e) {
    merge_keys[e] = shared::TrtMergeKey(scores.data(), num_boxes, classes, capacity, counts.data(),
                                        kept_positions.data(), e);
    entries_of[e] = e;
  }
  SortPairsOnHost(&merge_keys, &entries_of);
  const int64_t per_image = std::min(keep, classes * capacity);
  for (int64_t i = 0; i < batch * per_image; ++i) {
    const int64_t b = i / per_image, row = i % per_image, at = b * classes * capacity + row;
    if (static_cast<uint32_t>(merge_keys[at]) == shared::kNotACandidate) continue;
    shared::WriteTrtDetection(params, boxes.data(), loc_classes, scores.data(), num_boxes, classes, capacity,
                              kept_positions.data(), b, row, entries_of[at], out.dets.data(), out.labels.data(),
                              out.index.data());
  }
  return out;
}

}  // namespace opbridge::testing
