// The per-entry steps of the CUDA NMS kernels that depend on the op's layout, as host-and-device
// functions (the CPU tests run them): the sort keys that make every (image, class) problem a
// segment of candidates in score order, and TensorRT batched NMS's detection rows.
#pragma once

#include <stdint.h>

#include "core/trt_batched_nms.h"
#include "kernels/shared/host_device.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::shared {

// The key of a candidate of problem `problem`: sorted ascending, the problems come one after
// another, each in descending score order, its non-candidates last.
OPBRIDGE_HD inline uint64_t ProblemKey(int64_t problem, bool candidate, float score) {
  return (static_cast<uint64_t>(problem) << 32) | (candidate ? DescendingScoreKey(score) : kNotACandidate);
}

// The multi-class layout, scores [B, C, N]: entry i is box i % N of problem i / N (image b, class
// c), a candidate when its score is > score_threshold (never NaN).
OPBRIDGE_HD inline uint64_t MulticlassNmsKey(const float* scores, int64_t n, float score_threshold, int64_t i) {
  return ProblemKey(i / n, scores[i] > score_threshold, scores[i]);
}

// TensorRT batched NMS, scores [B, S, C]: entry i = (b * S + s) * C + c is box s of problem
// b * C + c, a candidate when c is not the background class and its score is > score_threshold.
OPBRIDGE_HD inline uint64_t TrtBatchedNmsKey(const TrtBatchedNmsParams& p, const float* scores, int64_t num_boxes,
                                             int64_t classes, int64_t i) {
  const int64_t c = i % classes, b = i / (num_boxes * classes);
  return ProblemKey(b * classes + c, c != p.background_label_id && scores[i] > p.score_threshold, scores[i]);
}

// TensorRT batched NMS's merge: kept box k of problem (b, c), at entry e = (b * classes + c) *
// capacity + k, keyed by image, then descending score; entries past the problem's kept count
// sort after the image's detections. A stable sort of the entries in order keeps ties by class,
// then by the class's own order (the plugin's segmented stable sort).
OPBRIDGE_HD inline uint64_t TrtMergeKey(const float* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                        const int64_t* kept_counts, const int32_t* kept_positions, int64_t e) {
  const int64_t problem = e / capacity, k = e % capacity;
  const int64_t b = problem / classes, c = problem % classes;
  if (k >= kept_counts[problem]) return ProblemKey(b, false, 0.0f);
  return ProblemKey(b, true, scores[(b * num_boxes + kept_positions[e]) * classes + c]);
}

// Detection row `row` (< keep_topk) of image b from the merged entry e: the box (clamped to [0, 1]
// with CUDA's fminf / fmaxf, which return the number when one side is NaN, as the plugin does),
// its score, class and index (along S when boxes are shared, else in the [C, S] layout).
OPBRIDGE_HD inline void WriteTrtDetection(const TrtBatchedNmsParams& p, const float* boxes, int64_t loc_classes,
                                          const float* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                          const int32_t* kept_positions, int64_t b, int64_t row, int64_t e,
                                          float* dets, int32_t* labels, int32_t* index) {
  const int64_t c = (e / capacity) % classes;
  const int32_t box_index = kept_positions[e];
  const int64_t box_size = p.rotated ? 5 : 4, out = b * p.keep_topk + row;
  const float* box = boxes + ((b * num_boxes + box_index) * loc_classes + (loc_classes == 1 ? 0 : c)) * box_size;
  for (int64_t v = 0; v < box_size; ++v) {
    dets[out * (box_size + 1) + v] = p.clip_boxes ? fmaxf(fminf(box[v], 1.0f), 0.0f) : box[v];
  }
  dets[out * (box_size + 1) + box_size] = scores[(b * num_boxes + box_index) * classes + c];
  labels[out] = static_cast<int32_t>(c);
  if (index != nullptr) index[out] = loc_classes == 1 ? box_index : static_cast<int32_t>(c * num_boxes + box_index);
}

}  // namespace opbridge::shared
