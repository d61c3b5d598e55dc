// The CUDA NMS kernels' steps (kernels/cuda/nms.cu), run on the host: the same host-and-device
// functions (kernels/shared/nms_tiles.h, nms_layouts.h) in the kernels' order, each kernel's threads
// one after another, CUB's stable radix and segmented sorts as stable sorts by key and its scans as
// loops. The tests compare what they give with the CPU kernels. `budget_words` is the plan's mask
// budget (the kernels use shared::kNmsMaskBudgetWords): 0 sends every problem to the band path, a
// small one splits a call between the two paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/nms.h"
#include "core/nms_match.h"
#include "core/nms_rotated.h"
#include "core/trt_batched_nms.h"
#include "kernels/shared/nms_layouts.h"
#include "kernels/shared/nms_rotated_rules.h"
#include "kernels/shared/nms_tiles.h"

namespace opbridge::testing {

// CUB's DeviceRadixSort::SortPairs over [begin, end): ascending keys, stable.
template <class Key, class Value>
void SortPairsOnHost(std::vector<Key>* keys, std::vector<Value>* values, size_t begin = 0, size_t end = SIZE_MAX) {
  end = std::min(end, keys->size());
  std::vector<size_t> order(end - begin);
  std::iota(order.begin(), order.end(), begin);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*keys)[a] < (*keys)[b]; });
  std::vector<Key> sorted_keys;
  std::vector<Value> sorted_values;
  for (size_t i : order) {
    sorted_keys.push_back((*keys)[i]);
    sorted_values.push_back((*values)[i]);
  }
  std::copy(sorted_keys.begin(), sorted_keys.end(), keys->begin() + begin);
  std::copy(sorted_values.begin(), sorted_values.end(), values->begin() + begin);
}

// What the suppression steps leave (nms.cu's Suppression).
struct HostSuppression {
  std::vector<int32_t> sorted_positions;
  std::vector<int64_t> problem_of;  // each candidate's problem (per-(image, class) layouts; empty: a box list)
  int64_t candidates = -1;          // the first places that hold candidates (-1: all)
  std::vector<shared::NmsProblem> problems;
  std::vector<int32_t> kept_positions;
  std::vector<int64_t> kept_counts;
};

// nms.cu's Suppress: the sorted boxes, the plan, the mask and its resolution (mask path), the tile
// path for the problems the plan leaves off the mask.
template <class Source, class Rule>
void SuppressOnHost(HostSuppression* a, const Source& source, const Rule& rule, int64_t kept_slots,
                    int64_t budget_words) {
  using shared::kNmsTile;
  using Box = decltype(source.BoxOf(0, 0));
  const int64_t entries = static_cast<int64_t>(a->sorted_positions.size());
  std::vector<Box> boxes(entries);
  for (int64_t i = 0; i < (a->candidates >= 0 ? a->candidates : entries); ++i) {  // SortedBoxesKernel
    int64_t p = 0;
    if (!a->problem_of.empty()) {
      p = a->problem_of[i];
      if (i - a->problems[p].begin >= a->problems[p].count) continue;
    }
    boxes[i] = source.BoxOf(p, a->sorted_positions[i]);
  }
  int64_t mask_words = 0, pairs = 0;  // PlanKernel
  shared::PlanNmsProblems(a->problems.data(), static_cast<int64_t>(a->problems.size()), budget_words, &mask_words,
                          &pairs);
  std::vector<uint64_t> mask(mask_words);
  a->kept_positions.assign(kept_slots, -1);
  a->kept_counts.assign(a->problems.size(), -1);
  for (size_t index = 0; index < a->problems.size(); ++index) {
    const shared::NmsProblem& p = a->problems[index];
    const int64_t room = shared::KeptRoom(p);
    int64_t kept_total = 0;
    if (p.uses_mask) {
      uint64_t* rows = mask.data() + p.mask_begin;
      for (int64_t row_tile = 0; row_tile < p.words; ++row_tile) {  // MaskKernel, the problem's pairs
        for (int64_t column = row_tile; column < p.words; ++column) {
          const Box* columns = boxes.data() + p.begin + column * kNmsTile;
          for (int64_t i = row_tile * kNmsTile; i < std::min(p.count, (row_tile + 1) * kNmsTile); ++i) {
            rows[i * p.words + column] =
                shared::NmsMaskWord(boxes[p.begin + i], i, columns, column, p.count, rule);
          }
        }
      }
      std::vector<uint64_t> removed(p.words, 0);  // ResolveKernel
      for (int64_t tile = 0; tile < p.words && kept_total < room; ++tile) {
        const int64_t first = tile * kNmsTile;
        const int in_tile = static_cast<int>(std::min<int64_t>(kNmsTile, p.count - first));
        uint64_t diag[kNmsTile];
        for (int t = 0; t < in_tile; ++t) diag[t] = rows[(first + t) * p.words + tile];
        const uint64_t kept = shared::ResolveTileBits(removed[tile], diag, in_tile, room - kept_total);
        for (int t = 0; t < kNmsTile; ++t) {
          if ((kept >> t) & 1) {
            a->kept_positions[p.kept_begin + kept_total + shared::KeptRank(kept, t)] =
                a->sorted_positions[p.begin + first + t];
          }
        }
        if (kept != 0) {
          for (int64_t w = tile + 1; w < p.words; ++w) removed[w] |= shared::KeptRowsWord(rows, p.words, tile, kept, w);
        }
        kept_total += shared::PopCount(kept);
      }
    } else {
      // The band path (SuppressInBands), kNmsBandRows candidates at a time.
      using shared::kNmsBandRows;
      using shared::kNmsBandWords;
      std::vector<Box> kept_boxes(std::max<int64_t>(room, 1));
      std::vector<uint64_t> band_mask(kNmsBandRows * kNmsBandWords);
      for (int64_t band = 0; band * kNmsBandRows < p.count && kept_total < room; ++band) {
        const int64_t band_first = band * kNmsBandRows, in_band = std::min(kNmsBandRows, p.count - band_first);
        const Box* band_boxes = boxes.data() + p.begin + band_first;
        std::vector<uint64_t> removed(kNmsBandWords, 0);
        // BandKeptKernel: each (candidate tile, kept tile) block, each thread its candidate.
        for (int64_t candidate_tile = 0; candidate_tile < kNmsBandWords; ++candidate_tile) {
          for (int64_t k_tile = 0; k_tile * kNmsTile < kept_total; ++k_tile) {
            const int in_kept = static_cast<int>(std::min<int64_t>(kNmsTile, kept_total - k_tile * kNmsTile));
            for (int t = 0; t < kNmsTile; ++t) {
              const int64_t c = candidate_tile * kNmsTile + t;
              if (c < in_band &&
                  shared::SuppressedByKept(kept_boxes.data() + k_tile * kNmsTile, in_kept, band_boxes[c], rule)) {
                removed[candidate_tile] |= uint64_t{1} << t;
              }
            }
          }
        }
        // BandMaskKernel: the band's pairs; a removed row gets 0.
        const int64_t band_words = (in_band + kNmsTile - 1) / kNmsTile;
        for (int64_t row_tile = 0; row_tile < band_words; ++row_tile) {
          for (int64_t column = row_tile; column < band_words; ++column) {
            const Box* columns = band_boxes + column * kNmsTile;
            for (int64_t i = row_tile * kNmsTile; i < std::min(in_band, (row_tile + 1) * kNmsTile); ++i) {
              const bool gone = (removed[row_tile] >> (i % kNmsTile)) & 1;
              band_mask[i * kNmsBandWords + column] =
                  gone ? 0 : shared::NmsMaskWord(band_boxes[i], i, columns, column, in_band, rule);
            }
          }
        }
        // BandResolveKernel: ResolveRows over the band from the removed words and the kept so far.
        for (int64_t tile = 0; tile < band_words && kept_total < room; ++tile) {
          const int64_t first = tile * kNmsTile;
          const int in_tile = static_cast<int>(std::min<int64_t>(kNmsTile, in_band - first));
          uint64_t diag[kNmsTile];
          for (int t = 0; t < in_tile; ++t) diag[t] = band_mask[(first + t) * kNmsBandWords + tile];
          const uint64_t kept = shared::ResolveTileBits(removed[tile], diag, in_tile, room - kept_total);
          for (int t = 0; t < kNmsTile; ++t) {
            if ((kept >> t) & 1) {
              const int64_t at = kept_total + shared::KeptRank(kept, t);
              a->kept_positions[p.kept_begin + at] = a->sorted_positions[p.begin + band_first + first + t];
              kept_boxes[at] = band_boxes[first + t];
            }
          }
          if (kept != 0) {
            for (int64_t w = tile + 1; w < band_words; ++w) {
              removed[w] |= shared::KeptRowsWord(band_mask.data(), kNmsBandWords, tile, kept, w);
            }
          }
          kept_total += shared::PopCount(kept);
        }
      }
    }
    a->kept_counts[index] = kept_total;
  }
}

// The problems of the per-(image, class) layouts (nms.cu's SegmentedSuppress, steps 1 and 2): the
// candidates packed problem after problem, each problem's in box order, then sorted by score; their
// arrays sized by their count where the plan copies it (budget_words: the plan's budget), else by
// the entries, the places past the candidates never written (count_candidates: SegmentedSuppress's).
template <class Layout>
HostSuppression SegmentCandidatesOnHost(const Layout& layout, int64_t problems, int64_t limit, int64_t room,
                                        int64_t budget_words, bool count_candidates) {
  const int64_t entries = problems * layout.segment;
  std::vector<int64_t> ranks(entries + 1);
  for (int64_t v = 0; v <= entries; ++v) ranks[v] = v < entries && layout.Candidate(v);  // CandidateFlagsKernel
  int64_t sum = 0;
  for (int64_t& r : ranks) sum += std::exchange(r, sum);  // the exclusive scan
  const bool copied =
      shared::NmsPlanCopied(problems * shared::NmsMaskBound(limit), budget_words, count_candidates, entries);
  HostSuppression a;
  a.candidates = ranks[entries];
  const int64_t places = copied ? a.candidates : entries;
  std::vector<uint32_t> keys(places, 0);
  a.sorted_positions.assign(places, -1);
  a.problem_of.assign(places, -1);
  for (int64_t v = 0; v < entries; ++v) {  // ScatterCandidatesKernel
    if (ranks[v + 1] == ranks[v]) continue;
    const int64_t p = v / layout.segment, at = ranks[v];
    keys[at] = shared::DescendingScoreKey(layout.Score(v));
    a.sorted_positions[at] = static_cast<int32_t>(v - p * layout.segment);
    a.problem_of[at] = p;
  }
  for (int64_t p = 0; p < problems; ++p) {  // SegmentProblemsKernel, then the segmented sort
    const int64_t begin = ranks[p * layout.segment], count = ranks[(p + 1) * layout.segment] - begin;
    shared::NmsProblem problem{};
    problem.begin = begin;
    problem.count = std::min(count, limit);
    problem.kept_begin = p * room;
    problem.kept_room = room;
    a.problems.push_back(problem);
    SortPairsOnHost(&keys, &a.sorted_positions, begin, begin + count);
  }
  return a;
}

// nms.cu's BoxListNms (cuda::Nms, cuda::NmsRotated): the kept indices.
template <class Source, class Rule, class T>
std::vector<int64_t> BoxListNmsOnHost(const Source& source, const Rule& rule, const std::vector<T>& scores,
                                      const int64_t* categories, int64_t budget_words) {
  const int64_t n = static_cast<int64_t>(scores.size());
  std::vector<int64_t> keep;
  if (n == 0) return keep;
  std::vector<uint32_t> keys(n);
  HostSuppression a;
  a.sorted_positions.resize(n);
  for (int64_t i = 0; i < n; ++i) {  // ScoreKeysKernel
    keys[i] = shared::DescendingScoreKey(shared::Load(&scores[i]));
    a.sorted_positions[i] = static_cast<int32_t>(i);
  }
  SortPairsOnHost(&keys, &a.sorted_positions);
  if (categories == nullptr) {
    shared::NmsProblem problem{};  // SingleProblemKernel
    problem.count = problem.kept_room = n;
    a.problems.push_back(problem);
    SuppressOnHost(&a, source, rule, n, budget_words);
    keep.assign(a.kept_positions.begin(), a.kept_positions.begin() + a.kept_counts[0]);
    return keep;
  }
  std::vector<uint64_t> category_keys(n);  // CategoryKeysKernel, then the stable sort by category
  for (int64_t i = 0; i < n; ++i) category_keys[i] = shared::CategoryKey(categories[a.sorted_positions[i]]);
  SortPairsOnHost(&category_keys, &a.sorted_positions);
  std::vector<int64_t> runs(n + 1);  // RunStartsKernel, the scan, RunBeginsKernel, RunCountsKernel
  for (int64_t i = 0; i <= n; ++i) runs[i] = i < n && (i == 0 || category_keys[i] != category_keys[i - 1]);
  int64_t sum = 0;
  for (int64_t& r : runs) sum += std::exchange(r, sum);
  for (int64_t i = 0; i < n; ++i) {
    if (runs[i + 1] == runs[i]) continue;
    shared::NmsProblem problem{};
    problem.begin = problem.kept_begin = i;
    a.problems.push_back(problem);
  }
  for (size_t p = 0; p < a.problems.size(); ++p) {
    const int64_t end = p + 1 < a.problems.size() ? a.problems[p + 1].begin : n;
    a.problems[p].count = a.problems[p].kept_room = end - a.problems[p].begin;
  }
  SuppressOnHost(&a, source, rule, n, budget_words);
  std::vector<uint32_t> order_keys(n, shared::kNotACandidate);  // UnkeptKeysKernel, KeptKeysKernel
  std::vector<int32_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t problem = runs[i + 1] - 1;
    if (i - a.problems[problem].kept_begin < a.kept_counts[problem]) {
      order_keys[a.kept_positions[i]] = shared::DescendingScoreKey(shared::Load(&scores[a.kept_positions[i]]));
    }
  }
  SortPairsOnHost(&order_keys, &positions);
  const int64_t total = std::accumulate(a.kept_counts.begin(), a.kept_counts.end(), int64_t{0});
  keep.assign(positions.begin(), positions.begin() + total);
  return keep;
}

// cuda::Nms: the kept indices (T: float or half storage).
template <class T>
std::vector<int64_t> NmsOnHost(const NmsParams& params, const std::vector<T>& boxes, const std::vector<T>& scores,
                               const int64_t* categories, int64_t budget_words = shared::kNmsMaskBudgetWords) {
  const float offset = static_cast<float>(params.offset);
  return BoxListNmsOnHost(shared::NmsBoxSource<T>{boxes.data(), 1, 0, 0, 4, offset},
                          shared::TorchvisionRule{offset, params.iou_threshold}, scores, categories, budget_words);
}

// cuda::NmsRotated: the kept indices (T: float or half storage).
template <class T>
std::vector<int64_t> NmsRotatedOnHost(const NmsRotatedParams& params, const std::vector<T>& boxes,
                                      const std::vector<T>& scores, const int64_t* categories,
                                      int64_t budget_words = shared::kNmsMaskBudgetWords) {
  const shared::RotatedNmsConvention& mmcv = shared::kMmcvNmsRotated;
  return BoxListNmsOnHost(shared::RotatedBoxSource<T>{boxes.data(), 1, 0, 0, 5, params.clockwise, mmcv.min_area},
                          shared::RotatedNmsRule{params.iou_threshold, mmcv.inclusive}, scores, categories,
                          budget_words);
}

// nms.cu's MulticlassNmsOf: the [rows, 3] rows, flattened.
template <class Source, class Rule, class T>
std::vector<int64_t> MulticlassNmsOfOnHost(const MulticlassNmsParams& params, const Source& source, const Rule& rule,
                                           const std::vector<T>& scores, int64_t batch, int64_t classes,
                                           int64_t n, int64_t budget_words) {
  const int64_t problems = batch * classes;
  const int64_t cap = params.max_output_boxes_per_class < 0 || params.max_output_boxes_per_class > n
                          ? n : params.max_output_boxes_per_class;
  std::vector<int64_t> rows;
  if (problems == 0 || cap == 0) return rows;
  HostSuppression a = SegmentCandidatesOnHost(shared::MulticlassLayout<T>{scores.data(), n, params.score_threshold},
                                              problems, n, cap, budget_words, true);
  SuppressOnHost(&a, source, rule, problems * cap, budget_words);
  for (int64_t p = 0; p < problems; ++p) {  // SelectedRowsKernel (rows in problem, then kept order)
    for (int64_t k = 0; k < a.kept_counts[p]; ++k) rows.insert(rows.end(), {p / classes, p % classes,
                                                                            a.kept_positions[p * cap + k]});
  }
  return rows;
}

// cuda::MulticlassNms: the [rows, 3] rows, flattened (T: float or half storage).
template <class T>
std::vector<int64_t> MulticlassNmsOnHost(const MulticlassNmsParams& params, const std::vector<T>& boxes,
                                         const std::vector<T>& scores, int64_t batch, int64_t classes, int64_t n,
                                         int64_t budget_words = shared::kNmsMaskBudgetWords) {
  return MulticlassNmsOfOnHost(params, shared::NmsBoxSource<T>{boxes.data(), classes, n * 4, 0, 4, 0.0f},
                               shared::TorchvisionRule{0.0f, params.iou_threshold}, scores, batch, classes, n,
                               budget_words);
}

// cuda::MulticlassNmsRotated: the [rows, 3] rows, flattened (T: float or half storage).
template <class T>
std::vector<int64_t> MulticlassNmsRotatedOnHost(const MulticlassNmsRotatedParams& params, const std::vector<T>& boxes,
                                                const std::vector<T>& scores, int64_t batch, int64_t classes,
                                                int64_t n, int64_t budget_words = shared::kNmsMaskBudgetWords) {
  const shared::RotatedNmsConvention& mmdeploy = shared::kMmdeployNmsRotated;
  MulticlassNmsParams p;
  p.iou_threshold = params.iou_threshold;
  p.score_threshold = params.score_threshold;
  p.max_output_boxes_per_class = -1;
  return MulticlassNmsOfOnHost(p, shared::RotatedBoxSource<T>{boxes.data(), classes, n * 5, 0, 5, true, mmdeploy.min_area},
                               shared::RotatedNmsRule{params.iou_threshold, mmdeploy.inclusive}, scores, batch, classes,
                               n, budget_words);
}

// cuda::TrtBatchedNms: dets, labels and index (outputs as the kernel leaves them).
template <class T = float>
struct TrtOutputs {
  std::vector<T> dets;
  std::vector<int32_t> labels, index;
};

// T: float or half storage (dets of the same).
template <class T>
TrtOutputs<T> TrtBatchedNmsOnHost(const TrtBatchedNmsParams& params, const std::vector<T>& boxes, int64_t loc_classes,
                                  const std::vector<T>& scores, int64_t batch, int64_t num_boxes, int64_t classes,
                                  int64_t budget_words = shared::kNmsMaskBudgetWords) {
  const int64_t keep = params.keep_topk, rows = batch * keep;
  const int64_t box_size = params.rotated ? 5 : 4;
  TrtOutputs<T> out{std::vector<T>(rows * (box_size + 1), T{}), std::vector<int32_t>(rows, -1),
                    std::vector<int32_t>(rows, -1)};
  if (rows == 0 || num_boxes == 0 || classes == 0) return out;
  const int64_t problems = batch * classes;
  const int64_t top_k = params.topk > 0 && params.topk <= num_boxes ? params.topk : num_boxes;
  const int64_t capacity = std::min(keep, top_k), merged = problems * capacity;
  const shared::TrtLayout<T> layout{scores.data(), num_boxes, classes, params.background_label_id, params.score_threshold};
  HostSuppression a = SegmentCandidatesOnHost(layout, problems, top_k, capacity, budget_words, false);
  if (params.rotated) {
    const shared::RotatedNmsConvention& plugin = shared::kTrtBatchedRotatedNms;
    const shared::RotatedBoxSource<T> source{boxes.data(), classes, num_boxes * loc_classes * 5,
                                             loc_classes == 1 ? 0 : 5, loc_classes * 5, true, plugin.min_area};
    SuppressOnHost(&a, source, shared::RotatedNmsRule{params.iou_threshold, plugin.inclusive}, merged, budget_words);
  } else {
    const shared::NmsBoxSource<T> source{boxes.data(), classes, num_boxes * loc_classes * 4,
                                         loc_classes == 1 ? 0 : 4, loc_classes * 4, 0.0f};
    SuppressOnHost(&a, source, shared::TorchvisionRule{0.0f, params.iou_threshold}, merged, budget_words);
  }
  std::vector<uint64_t> merge_keys(merged);  // MergeKeysKernel, the sort, TrtDetectionsKernel
  std::vector<int64_t> entries_of(merged);
  for (int64_t e = 0; e < merged; ++e) {
    merge_keys[e] = shared::TrtMergeKey(scores.data(), num_boxes, classes, capacity, a.kept_counts.data(),
                                        a.kept_positions.data(), e);
    entries_of[e] = e;
  }
  SortPairsOnHost(&merge_keys, &entries_of);
  const int64_t per_image = std::min(keep, classes * capacity);
  for (int64_t i = 0; i < batch * per_image; ++i) {
    const int64_t b = i / per_image, row = i % per_image, at = b * classes * capacity + row;
    if (static_cast<uint32_t>(merge_keys[at]) == shared::kNotACandidate) continue;
    shared::WriteTrtDetection(params, boxes.data(), loc_classes, scores.data(), num_boxes, classes, capacity,
                              a.kept_positions.data(), b, row, entries_of[at], out.dets.data(), out.labels.data(),
                              out.index.data());
  }
  return out;
}

// cuda::NmsMatch: the [rows, 4] rows, flattened (MatchKeptFlagsKernel, FirstSuppressorKernel, the
// scan of the counts and MatchRowsKernel after the suppression).
// T: float or half storage.
template <class T>
std::vector<int64_t> NmsMatchOnHost(const NmsMatchParams& params, const std::vector<T>& boxes,
                                    const std::vector<T>& scores, int64_t batch, int64_t classes, int64_t n,
                                    int64_t budget_words = shared::kNmsMaskBudgetWords) {
  const int64_t problems = batch * classes, entries = problems * n;
  std::vector<int64_t> rows;
  if (entries == 0) return rows;
  HostSuppression a =
      SegmentCandidatesOnHost(shared::MatchLayout<T>{scores.data(), n}, problems, n, n, budget_words, false);
  const shared::NmsBoxSource<T> source{boxes.data(), classes, n * 4, 0, 4, 0.0f};
  const shared::MatchRule rule{params.iou_threshold};
  SuppressOnHost(&a, source, rule, entries, budget_words);
  std::vector<uint8_t> kept(entries, 0);
  for (int64_t e = 0; e < entries; ++e) {
    if (e % n < a.kept_counts[e / n]) kept[(e / n) * n + a.kept_positions[e]] = 1;
  }
  std::vector<int32_t> first(entries, -1);
  std::vector<int64_t> counts(entries, 0);
  for (int64_t e = 0; e < entries; ++e) {
    const int64_t p = e / n, j = e % n, begin = p * n;
    if (kept[begin + a.sorted_positions[e]]) continue;
    const shared::NmsBox later = source.BoxOf(p, a.sorted_positions[e]);
    for (int64_t i = 0; i < j; ++i) {
      if (kept[begin + a.sorted_positions[begin + i]] &&
          rule(source.BoxOf(p, a.sorted_positions[begin + i]), later)) {
        first[e] = static_cast<int32_t>(i);
        if (shared::Load(&scores[begin + a.sorted_positions[begin + i]]) > params.score_threshold) ++counts[begin + i];
        break;
      }
    }
  }
  for (int64_t e = 0; e < entries; ++e) {  // the scan, then the rows of each reporting kept box
    if (counts[e] == 0) continue;
    const int64_t p = e / n, i = e % n, begin = p * n;
    for (int64_t j = i + 1; j < n; ++j) {
      if (first[begin + j] == i) rows.insert(rows.end(), {p / classes, p % classes, a.sorted_positions[e],
                                                          a.sorted_positions[begin + j]});
    }
  }
  return rows;
}

}  // namespace opbridge::testing
