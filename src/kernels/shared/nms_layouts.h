// The per-entry steps of the CUDA NMS kernels that depend on the op's layout, as host-and-device
// functions (the CPU tests run them): which entries are candidates, in each op's problem-major
// order, and TensorRT batched NMS's merge and detection rows.
#pragma once

#include <stdint.h>

#include "core/half_storage.h"
#include "core/host_device.h"
#include "core/trt_batched_nms.h"
#include "kernels/shared/nms_rules.h"

namespace opbridge::shared {

// The layouts with one problem per image and class. Entry v = p * segment + s of the problem-major
// order is box s of problem p = b * classes + c; the compaction packs the candidates, problem after
// problem, each problem's in box order: candidate v goes to the place that counts the candidates
// before it (the flags' exclusive scan), so the arrays after it hold the candidates only.
//
// The multi-class layout, scores [B, C, N] (segment N): already problem-major; a candidate scores >
// score_threshold (never NaN). T: float or half storage, each score read as the float it is.
template <class T>
struct MulticlassLayout {
  const T* scores;
  int64_t segment;
  float score_threshold;
  OPBRIDGE_HD float Score(int64_t v) const { return Load(scores + v); }
  OPBRIDGE_HD bool Candidate(int64_t v) const { return Load(scores + v) > score_threshold; }
};

// NMSMatch's layout, scores [B, C, N] (segment N): every box of every problem takes part, NaN scores
// included (mmdeploy's nms_match sorts and visits them all).
template <class T>
struct MatchLayout {
  const T* scores;
  int64_t segment;
  OPBRIDGE_HD float Score(int64_t v) const { return Load(scores + v); }
  OPBRIDGE_HD bool Candidate(int64_t) const { return true; }
};

// TensorRT batched NMS, scores [B, S, C] (segment S): box s of class c of image b is entry
// (b * S + s) * C + c; a candidate is not of the background class and scores > score_threshold.
template <class T>
struct TrtLayout {
  const T* scores;
  int64_t segment, classes, background;
  float score_threshold;
  OPBRIDGE_HD int64_t ScoreIndex(int64_t v) const {
    const int64_t p = v / segment, s = v % segment;
    return ((p / classes) * segment + s) * classes + p % classes;
  }
  OPBRIDGE_HD float Score(int64_t v) const { return Load(scores + ScoreIndex(v)); }
  OPBRIDGE_HD bool Candidate(int64_t v) const {
    return (v / segment) % classes != background && Load(scores + ScoreIndex(v)) > score_threshold;
  }
};

// Where the boxes are: box `position` of problem p of a per-(image, class) layout (a box list: p = 0,
// image_stride and class_stride 0) is at boxes + (p / classes) * image_stride + (p % classes) *
// class_stride + position * box_stride. T: float or half storage, each coordinate read as the float
// it is.
template <class T>
struct NmsBoxSource {
  const T* boxes;
  int64_t classes, image_stride, class_stride, box_stride;
  float offset;
  OPBRIDGE_HD NmsBox BoxOf(int64_t p, int32_t position) const {
    const T* box = boxes + (p / classes) * image_stride + (p % classes) * class_stride +
                   static_cast<int64_t>(position) * box_stride;
    float coordinates[4];
    LoadRun(box, 4, coordinates);
    return MakeNmsBox(coordinates, offset);
  }
};

// The key of an entry of problem `problem`: sorted ascending, the problems come one after another,
// each in descending score order, its non-candidates last.
OPBRIDGE_HD inline uint64_t ProblemKey(int64_t problem, bool candidate, float score) {
  return (static_cast<uint64_t>(problem) << 32) | (candidate ? DescendingScoreKey(score) : kNotACandidate);
}

// A category as an unsigned key whose ascending order is the int64 order.
OPBRIDGE_HD inline uint64_t CategoryKey(int64_t category) {
  return static_cast<uint64_t>(category) ^ (uint64_t{1} << 63);
}

// TensorRT batched NMS's merge: kept box k of problem (b, c), at entry e = (b * classes + c) *
// capacity + k, keyed by image, then descending score; entries past the problem's kept count
// sort after the image's detections (and are not read). A stable sort of the entries in order keeps
// ties by class, then by the class's own order (the plugin's segmented stable sort).
template <class T>
OPBRIDGE_HD inline uint64_t TrtMergeKey(const T* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                        const int64_t* kept_counts, const int32_t* kept_positions, int64_t e) {
  const int64_t problem = e / capacity, k = e % capacity;
  const int64_t b = problem / classes, c = problem % classes;
  if (k >= kept_counts[problem]) return ProblemKey(b, false, 0.0f);
  return ProblemKey(b, true, Load(scores + (b * num_boxes + kept_positions[e]) * classes + c));
}

// Detection row `row` (< keep_topk) of image b from the merged entry e: the box (clamped to [0, 1]
// with CUDA's fminf / fmaxf, which return the number when one side is NaN, as the plugin does),
// its score, class and index (along S when boxes are shared, else in the [C, S] layout). T: the
// storage type of boxes, scores and dets; a half box or score is written back as it was read (a
// clamp gives a half value, 0 or 1, too).
template <class T>
OPBRIDGE_HD inline void WriteTrtDetection(const TrtBatchedNmsParams& p, const T* boxes, int64_t loc_classes,
                                          const T* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                          const int32_t* kept_positions, int64_t b, int64_t row, int64_t e,
                                          T* dets, int32_t* labels, int32_t* index) {
  const int64_t c = (e / capacity) % classes;
  const int32_t box_index = kept_positions[e];
  const int64_t box_size = p.rotated ? 5 : 4, out = b * p.keep_topk + row;
  const T* box = boxes + ((b * num_boxes + box_index) * loc_classes + (loc_classes == 1 ? 0 : c)) * box_size;
  for (int64_t v = 0; v < box_size; ++v) {
    const float value = Load(box + v);
    Store(dets + out * (box_size + 1) + v, p.clip_boxes ? fmaxf(fminf(value, 1.0f), 0.0f) : value);
  }
  Store(dets + out * (box_size + 1) + box_size, Load(scores + (b * num_boxes + box_index) * classes + c));
  labels[out] = static_cast<int32_t>(c);
  if (index != nullptr) index[out] = loc_classes == 1 ? box_index : static_cast<int32_t>(c * num_boxes + box_index);
}

}  // namespace opbridge::shared
