// TensorRT's batched NMS as a CPU kernel (see trt_batched_nms.h). The plugin's pipeline:
//   1. per image and class (the background class skipped), the boxes scoring > score_threshold
//      are the candidates, in descending score order (a stable sort: ties by box index);
//   2. the first `topk` candidates of each class take part in greedy NMS, suppression when
//      IoU > iou_threshold: the axis-aligned IoU without the +1 of unnormalized boxes (whatever
//      is_normalized says), which is torchvision's rule (AxisAlignedProblem), or the rotated IoU
//      with mmcv's guard for degenerate boxes (RotatedProblem);
//   3. every class's kept boxes, merged in descending score order (ties: lower class first,
//      then the class's own order), the first keep_topk written as detections.
// Candidates are gathered per (image, class) in one pass over the scores [B, S, C]; the classes
// are independent problems run as parallel tasks, then each image's merge is a task. Every task
// writes only its own results: the output does not depend on the thread count.
#include "kernels/cpu/trt_batched_nms.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "kernels/cpu/nms_problems.h"

namespace opbridge::cpu {
namespace {

// One kept detection of a class, for the merge.
struct Kept {
  float score;
  int32_t cls, rank, box;
};

template <class Problem, class T>
Status SuppressPerClass(const Problem& prototype, const TrtBatchedNmsParams& p, const T* boxes,
                        int64_t loc_classes, int64_t batch, int64_t num_boxes, int64_t classes, int64_t top_k,
                        const int64_t* segment_start, int32_t* positions, float* candidate_scores, int64_t* kept_count,
                        ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t box_size = p.box_size();
  const int64_t problems = batch * classes;
  auto problem_bytes = [](int64_t count) {
    return ArenaBytes<int32_t>(count) * 2 + ArenaBytes<float>(count) +
           ArenaBytes<uint64_t>(ScoreOrderScratchWords(count)) + Problem::Bytes(count);
  };
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelForProblemRanges(runner, problems, [&](int64_t begin, int64_t end) {
    ReusedScratchBlock block(scratch);
    for (int64_t bc = begin; bc < end; ++bc) {
      const int64_t b = bc / classes, c = bc % classes;
      const int64_t count = segment_start[bc + 1] - segment_start[bc];
      kept_count[bc] = 0;
      if (count == 0) continue;
      void* memory = block.Reserve(problem_bytes(std::max<int64_t>(count, 256)));
      if (memory == nullptr) {
        out_of_memory = true;
        return;
      }
      Arena arena(memory, block.size());
      int32_t* order = arena.Take<int32_t>(count);
      int32_t* sorted_positions = arena.Take<int32_t>(count);
      float* sorted_scores = arena.Take<float>(count);
      void* sort_scratch = arena.Take<uint64_t>(ScoreOrderScratchWords(count));
      int32_t* segment_positions = positions + segment_start[bc];
      float* segment_scores = candidate_scores + segment_start[bc];
      ScoreOrder(segment_scores, count, order, sort_scratch);
      const int64_t taking_part = std::min(count, top_k);
      for (int64_t k = 0; k < taking_part; ++k) {
        sorted_positions[k] = segment_positions[order[k]];
        sorted_scores[k] = segment_scores[order[k]];
      }
      Problem problem = prototype;
      problem.box_stride = loc_classes * box_size;
      problem.Carve(&arena, taking_part);
      const T* base = boxes + (b * num_boxes * loc_classes + (loc_classes == 1 ? 0 : c)) * box_size;
      problem.Gather(base, sorted_positions, taking_part);
      problem.Suppress(taking_part, -1);
      // The kept candidates, in score order, replace the segment's first entries.
      int64_t kept = 0;
      for (int64_t k = 0; k < taking_part; ++k) {
        if (!problem.kept[k]) continue;
        segment_positions[kept] = sorted_positions[k];
        segment_scores[kept++] = sorted_scores[k];
      }
      kept_count[bc] = kept;
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for ", num_boxes, " boxes");
  return Status::Ok();
}

}  // namespace

template <class T>
Status TrtBatchedNms(const TrtBatchedNmsParams& p, const T* boxes, int64_t loc_classes, const T* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, T* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t box_size = p.box_size(), row_size = box_size + 1, keep = p.keep_topk;
  const int64_t top_k = p.topk > 0 && p.topk <= num_boxes ? p.topk : num_boxes;
  std::fill(dets, dets + batch * keep * row_size, T{});  // +0 in every storage type
  std::fill(labels, labels + batch * keep, int32_t{-1});
  if (index != nullptr) std::fill(index, index + batch * keep, int32_t{-1});
  if (batch == 0 || num_boxes == 0 || keep == 0) return Status::Ok();

  // Candidates of every (image, class), in ascending box order: counted, then gathered.
  const int64_t problems = batch * classes;
  std::vector<int64_t> segment_start(static_cast<size_t>(problems) + 1, 0);
  auto candidate = [&](int64_t b, int64_t s, int64_t c) {
    return c != p.background_label_id && shared::Load(scores + (b * num_boxes + s) * classes + c) > p.score_threshold;
  };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < num_boxes; ++s) {
      for (int64_t c = 0; c < classes; ++c) segment_start[b * classes + c + 1] += candidate(b, s, c);
    }
  }
  for (int64_t bc = 0; bc < problems; ++bc) segment_start[bc + 1] += segment_start[bc];
  const int64_t total = segment_start[problems];
  const size_t bytes = ArenaBytes<int32_t>(total) + ArenaBytes<float>(total) + ArenaBytes<int64_t>(problems);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int32_t* positions = arena.Take<int32_t>(total);
  float* candidate_scores = arena.Take<float>(total);
  int64_t* kept_count = arena.Take<int64_t>(problems);
  {
    std::vector<int64_t> fill(segment_start.begin(), segment_start.end() - 1);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < num_boxes; ++s) {
        for (int64_t c = 0; c < classes; ++c) {
          if (!candidate(b, s, c)) continue;
          const int64_t at = fill[b * classes + c]++;
          positions[at] = static_cast<int32_t>(s);
          candidate_scores[at] = shared::Load(scores + (b * num_boxes + s) * classes + c);
        }
      }
    }
  }

  if (p.rotated) {
    RotatedProblem prototype{};
    prototype.threshold = p.iou_threshold;
    prototype.inclusive = shared::kTrtBatchedRotatedNms.inclusive;
    prototype.min_area = shared::kTrtBatchedRotatedNms.min_area;  // the plugin's copy of mmcv's guard
    prototype.clockwise = true;
    OPBRIDGE_RETURN_IF_ERROR(SuppressPerClass(prototype, p, boxes, loc_classes, batch, num_boxes, classes, top_k,
                                              segment_start.data(), positions, candidate_scores, kept_count, scratch,
                                              runner));
  } else {
    AxisAlignedProblem prototype{};
    prototype.offset = 0.0f;
    prototype.threshold = p.iou_threshold;
    OPBRIDGE_RETURN_IF_ERROR(SuppressPerClass(prototype, p, boxes, loc_classes, batch, num_boxes, classes, top_k,
                                              segment_start.data(), positions, candidate_scores, kept_count, scratch,
                                              runner));
  }

  // Per image: merge the classes' kept boxes and write the first keep_topk.
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(batch), [&](size_t task) {
    const int64_t b = static_cast<int64_t>(task);
    int64_t count = 0;
    for (int64_t c = 0; c < classes; ++c) count += kept_count[b * classes + c];
    if (count == 0) return;
    ScratchBlock merge_block(scratch, ArenaBytes<Kept>(count));
    auto* merged = static_cast<Kept*>(merge_block.data());
    if (merged == nullptr) {
      out_of_memory = true;
      return;
    }
    int64_t at = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t start = segment_start[b * classes + c];
      for (int64_t k = 0; k < kept_count[b * classes + c]; ++k) {
        merged[at++] = {candidate_scores[start + k], static_cast<int32_t>(c), static_cast<int32_t>(k), positions[start + k]};
      }
    }
    // The plugin's segmented stable sort over the classes laid out one after another: ties keep
    // the lower class, then the class's own order. (No NaN: a NaN score is never a candidate.)
    const int64_t rows = std::min(count, keep);
    std::partial_sort(merged, merged + rows, merged + count, [](const Kept& x, const Kept& y) {
      if (x.score != y.score) return x.score > y.score;
      return x.cls != y.cls ? x.cls < y.cls : x.rank < y.rank;
    });
    for (int64_t r = 0; r < rows; ++r) {
      const Kept& d = merged[r];
      const int64_t row = b * keep + r;
      const T* box = boxes + ((b * num_boxes + d.box) * loc_classes + (loc_classes == 1 ? 0 : d.cls)) * box_size;
      for (int64_t v = 0; v < box_size; ++v) {
        // The plugin clamps with CUDA's min and max, which return the number when one side is NaN.
        const float value = shared::Load(box + v);
        shared::Store(dets + row * row_size + v, p.clip_boxes ? std::fmax(std::fmin(value, 1.0f), 0.0f) : value);
      }
      shared::Store(dets + row * row_size + box_size, d.score);
      labels[row] = d.cls;
      // The box's index along S when boxes are shared, else its index in the [C, S] layout.
      if (index != nullptr) index[row] = loc_classes == 1 ? d.box : static_cast<int32_t>(d.cls * num_boxes + d.box);
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for the merge");
  return Status::Ok();
}

#define OPBRIDGE_TRT_BATCHED_NMS(T)                                                                         \
  template Status TrtBatchedNms<T>(const TrtBatchedNmsParams&, const T*, int64_t, const T*, int64_t, int64_t, \
                                   int64_t, T*, int32_t*, int32_t*, ScratchAllocator&, const TaskRunner&);
OPBRIDGE_TRT_BATCHED_NMS(float)
OPBRIDGE_TRT_BATCHED_NMS(shared::Float16)
OPBRIDGE_TRT_BATCHED_NMS(shared::BFloat16)
#undef OPBRIDGE_TRT_BATCHED_NMS

}  // namespace opbridge::cpu
