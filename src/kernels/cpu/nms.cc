// Axis-aligned NMS CPU kernels (see nms.h).
//
// Every problem (one category, or one batch and class) is ordered by score and handed to the
// greedy engine (greedy_nms.h) with torchvision's IoU rule. Problems are independent, so they
// run as parallel tasks, each writing only its own results: the output does not depend on the
// thread count. A single problem runs on one thread (greedy NMS is sequential by nature).
#include "kernels/cpu/nms.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstring>
#include <new>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/cpu/greedy_nms.h"

namespace opbridge::cpu {
namespace {

// One problem's boxes in processing order, as the rule and the greedy engine read them.
struct AxisAlignedProblem {
  float *x1, *y1, *x2, *y2, *area;
  float* longer_side;  // max(width, height): IoU <= the ratio of two boxes' longer sides
  float* extents;      // [count][4]
  uint8_t* active;
  uint8_t* kept;
  void* greedy;  // GreedyScratchBytes

  static size_t Bytes(int64_t count) {
    return ArenaBytes<float>(count) * 6 + ArenaBytes<float>(4 * count) + ArenaBytes<uint8_t>(count) * 2 +
           ArenaBytes<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }
  void Carve(Arena* arena, int64_t count) {
    x1 = arena->Take<float>(count);
    y1 = arena->Take<float>(count);
    x2 = arena->Take<float>(count);
    y2 = arena->Take<float>(count);
    area = arena->Take<float>(count);
    longer_side = arena->Take<float>(count);
    extents = arena->Take<float>(4 * count);
    active = arena->Take<uint8_t>(count);
    kept = arena->Take<uint8_t>(count);
    greedy = arena->Take<uint64_t>(static_cast<int64_t>(GreedyScratchBytes(count) / 8 + 1));
  }

  // Copies boxes[positions[k]] for k < count. A candidate is active when its width and height
  // (with the offset) are > 0 and its area is finite: any other box has an IoU of 0 or NaN
  // with every box under this rule (its overlap is 0, or its area is infinite or NaN), so it
  // is never suppressed and suppresses nothing.
  void Gather(const float* boxes, const int32_t* positions, int64_t count, float offset) {
    for (int64_t k = 0; k < count; ++k) {
      const float* b = boxes + 4 * static_cast<int64_t>(positions[k]);
      x1[k] = b[0];
      y1[k] = b[1];
      x2[k] = b[2];
      y2[k] = b[3];
      const float w = b[2] - b[0] + offset, h = b[3] - b[1] + offset;
      area[k] = w * h;
      longer_side[k] = std::max(w, h);
      active[k] = w > 0.0f && h > 0.0f && area[k] < std::numeric_limits<float>::infinity();
      if (active[k]) {
        // Two boxes overlap (inter > 0) only where [x1, x2 + offset] x [y1, y2 + offset] meet:
        // with offset 0, min(x2) - max(x1) > 0 is an exact comparison of x2 and x1; with offset
        // 1, the rounded difference exceeds -1 only if x2 + 1 > x1, and x1 is representable.
        float* e = extents + 4 * k;
        e[0] = b[0];
        e[1] = b[1];
        e[2] = b[2] + offset;
        e[3] = b[3] + offset;
      }
    }
  }

  int64_t Suppress(int64_t count, float offset, float threshold, int64_t max_kept) {
    GreedyProblem problem;
    problem.count = count;
    problem.extents = extents;
    problem.active = active;
    problem.max_kept = max_kept;
    // For boxes with sides (w1, h1) and (w2, h2), the overlap is at most min(w1, w2) wide and
    // the union at least max(w1, w2) times the other box's height, so IoU <= min(w1, w2) /
    // max(w1, w2), and likewise for heights and for the longer sides. The ratio is taken a
    // little under the threshold to absorb rounding in the IoU.
    problem.sizes = longer_side;
    problem.min_size_ratio = threshold * (1.0f - 1e-5f);
    problem.min_overlap_fraction = threshold * (1.0f - 1e-3f);
    const TorchvisionIouRule rule{x1, y1, x2, y2, area, offset, threshold};
    return GreedySuppress(problem, rule, kept, nullptr, greedy);
  }
};

// Writes the positions and values of the scores > threshold (a NaN never is) and returns their
// count. Most scores of a multi-class problem are below the threshold, so blocks of 16 are
// compared at once (SSE on x86-64, which every x86-64 CPU has) and only blocks holding a
// candidate are walked one by one.
int64_t FilterAbove(const float* scores, int64_t n, float threshold, int32_t* positions, float* values) {
  int64_t count = 0;
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 t = _mm_set1_ps(threshold);
  for (; i + 16 <= n; i += 16) {
    const __m128 a = _mm_cmpgt_ps(_mm_loadu_ps(scores + i), t);
    const __m128 b = _mm_cmpgt_ps(_mm_loadu_ps(scores + i + 4), t);
    const __m128 c = _mm_cmpgt_ps(_mm_loadu_ps(scores + i + 8), t);
    const __m128 d = _mm_cmpgt_ps(_mm_loadu_ps(scores + i + 12), t);
    if (_mm_movemask_ps(_mm_or_ps(_mm_or_ps(a, b), _mm_or_ps(c, d))) == 0) continue;
    for (int64_t k = i; k < i + 16; ++k) {
      if (scores[k] > threshold) {
        positions[count] = static_cast<int32_t>(k);
        values[count++] = scores[k];
      }
    }
  }
#endif
  for (; i < n; ++i) {
    if (scores[i] > threshold) {
      positions[count] = static_cast<int32_t>(i);
      values[count++] = scores[i];
    }
  }
  return count;
}

// Candidates per task when many small problems are batched into one task.
constexpr int64_t kTaskCandidates = 4096;

// Groups ranks 0..n-1 (positions in score order) by category, keeping rank order inside each
// category. Writes the grouped ranks and the start of every run (runs + 1 entries).
void GroupByCategory(const int64_t* categories, const int32_t* order, int64_t n, int32_t* grouped,
                     std::vector<int64_t>* run_starts) {
  int64_t lo = categories[0], hi = categories[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, categories[i]);
    hi = std::max(hi, categories[i]);
  }
  run_starts->clear();
  // Dense labels (the usual class ids): a counting sort. Computed in unsigned arithmetic, as
  // hi - lo may not fit an int64.
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (range < static_cast<uint64_t>(n) + 4096) {
    std::vector<int64_t> count(range + 2, 0);
    for (int64_t r = 0; r < n; ++r) ++count[static_cast<uint64_t>(categories[order[r]]) - static_cast<uint64_t>(lo) + 1];
    for (size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
    for (size_t c = 0; c + 1 < count.size(); ++c) {
      if (count[c + 1] > count[c]) run_starts->push_back(count[c]);
    }
    for (int64_t r = 0; r < n; ++r) {
      grouped[count[static_cast<uint64_t>(categories[order[r]]) - static_cast<uint64_t>(lo)]++] = static_cast<int32_t>(r);
    }
  } else {
    std::vector<std::pair<int64_t, int32_t>> items(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) items[r] = {categories[order[r]], static_cast<int32_t>(r)};
    std::sort(items.begin(), items.end());
    for (int64_t r = 0; r < n; ++r) {
      grouped[r] = items[r].second;
      if (r == 0 || items[r].first != items[r - 1].first) run_starts->push_back(r);
    }
  }
  run_starts->push_back(n);
}

}  // namespace

Status Nms(const NmsParams& params, const float* boxes, const float* scores, const int64_t* categories,
           int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch, const TaskRunner& runner) {
  *num_kept = 0;
  if (n == 0) return Status::Ok();
  const float offset = static_cast<float>(params.offset);
  // Per call: the score order, the ranks grouped by category, and a kept flag per rank.
  const size_t call_bytes = ArenaBytes<int32_t>(n) * 2 + ArenaBytes<uint8_t>(n) +
                            ArenaBytes<uint64_t>(static_cast<int64_t>(ScoreOrderScratchBytes(n) / 8 + 1));
  ScratchBlock call_block(scratch, call_bytes);
  if (call_block.data() == nullptr) return Status::Error("could not allocate ", call_bytes, " bytes of scratch memory");
  Arena call(call_block.data(), call_bytes);
  int32_t* order = call.Take<int32_t>(n);
  int32_t* grouped = call.Take<int32_t>(n);
  uint8_t* kept_by_rank = call.Take<uint8_t>(n);
  void* sort_scratch = call.Take<uint64_t>(static_cast<int64_t>(ScoreOrderScratchBytes(n) / 8 + 1));
  ScoreOrder(scores, n, order, sort_scratch);
  std::memset(kept_by_rank, 0, static_cast<size_t>(n));

  std::vector<int64_t> run_starts;
  if (categories == nullptr) {
    for (int64_t r = 0; r < n; ++r) grouped[r] = static_cast<int32_t>(r);
    run_starts = {0, n};
  } else {
    GroupByCategory(categories, order, n, grouped, &run_starts);
  }
  // Tasks: consecutive runs adding up to about kTaskCandidates candidates.
  std::vector<size_t> task_first_run = {0};
  int64_t in_task = 0;
  for (size_t run = 0; run + 1 < run_starts.size(); ++run) {
    in_task += run_starts[run + 1] - run_starts[run];
    if (in_task >= kTaskCandidates && run + 2 < run_starts.size()) {
      task_first_run.push_back(run + 1);
      in_task = 0;
    }
  }
  task_first_run.push_back(run_starts.size() - 1);

  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, task_first_run.size() - 1, [&](size_t task) {
    const size_t first = task_first_run[task], last = task_first_run[task + 1];
    int64_t largest = 0;
    for (size_t run = first; run < last; ++run) largest = std::max(largest, run_starts[run + 1] - run_starts[run]);
    const size_t bytes = ArenaBytes<int32_t>(largest) + AxisAlignedProblem::Bytes(largest);
    ScratchBlock block(scratch, bytes);
    if (block.data() == nullptr) {
      out_of_memory = true;
      return;
    }
    Arena arena(block.data(), bytes);
    int32_t* positions = arena.Take<int32_t>(largest);
    AxisAlignedProblem problem;
    problem.Carve(&arena, largest);
    for (size_t run = first; run < last; ++run) {
      const int32_t* ranks = grouped + run_starts[run];
      const int64_t count = run_starts[run + 1] - run_starts[run];
      for (int64_t k = 0; k < count; ++k) positions[k] = order[ranks[k]];
      problem.Gather(boxes, positions, count, offset);
      problem.Suppress(count, offset, params.iou_threshold, -1);
      for (int64_t k = 0; k < count; ++k) {
        if (problem.kept[k]) kept_by_rank[ranks[k]] = 1;
      }
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for ", n, " boxes");
  int64_t count = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (kept_by_rank[r]) keep[count++] = order[r];
  }
  *num_kept = count;
  return Status::Ok();
}

int64_t MulticlassNmsCapacity(const MulticlassNmsParams& params, int64_t n) {
  return params.max_output_boxes_per_class < 0 ? n : std::min(n, params.max_output_boxes_per_class);
}

Status MulticlassNms(const MulticlassNmsParams& params, const float* boxes, const float* scores, int64_t batch,
                     int64_t classes, int64_t n, int32_t* kept_boxes, int64_t* kept_counts,
                     ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t problems = batch * classes;
  const int64_t cap = MulticlassNmsCapacity(params, n);
  std::fill(kept_counts, kept_counts + problems, int64_t{0});
  if (problems == 0 || n == 0 || cap == 0) return Status::Ok();
  // At most 64 tasks, each taking a contiguous range of (batch, class) problems. A task filters
  // a problem's candidates into buffers of n, then takes scratch sized for the candidates only
  // (usually a small fraction of n), reusing it while it is large enough.
  const int64_t per_task = (problems + 63) / 64;
  const int64_t tasks = (problems + per_task - 1) / per_task;
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(tasks), [&](size_t task) {
    const size_t filter_bytes = ArenaBytes<int32_t>(n) + ArenaBytes<float>(n);
    ScratchBlock filter_block(scratch, filter_bytes);
    if (filter_block.data() == nullptr) {
      out_of_memory = true;
      return;
    }
    Arena filter_arena(filter_block.data(), filter_bytes);
    int32_t* candidates = filter_arena.Take<int32_t>(n);
    float* candidate_scores = filter_arena.Take<float>(n);
    auto problem_bytes = [](int64_t count) {
      return ArenaBytes<int32_t>(count) +
             ArenaBytes<uint64_t>(static_cast<int64_t>(ScoreOrderScratchBytes(count) / 8 + 1)) +
             AxisAlignedProblem::Bytes(count);
    };
    int64_t capacity = -1;
    void* memory = nullptr;
    const int64_t end = std::min(problems, static_cast<int64_t>(task + 1) * per_task);
    for (int64_t bc = static_cast<int64_t>(task) * per_task; bc < end; ++bc) {
      const int64_t b = bc / classes;
      const float* s = scores + bc * n;
      const int64_t count = FilterAbove(s, n, params.score_threshold, candidates, candidate_scores);
      if (count > capacity) {
        if (memory != nullptr) scratch.Free(memory);
        capacity = std::max<int64_t>(count, 256);
        memory = scratch.Allocate(problem_bytes(capacity));
        if (memory == nullptr) {
          out_of_memory = true;
          return;
        }
      }
      Arena arena(memory, problem_bytes(capacity));
      int32_t* order = arena.Take<int32_t>(count);
      void* sort_scratch = arena.Take<uint64_t>(static_cast<int64_t>(ScoreOrderScratchBytes(count) / 8 + 1));
      AxisAlignedProblem problem;
      problem.Carve(&arena, count);
      ScoreOrder(candidate_scores, count, order, sort_scratch);
      for (int64_t k = 0; k < count; ++k) order[k] = candidates[order[k]];
      problem.Gather(boxes + b * n * 4, order, count, 0.0f);
      problem.Suppress(count, 0.0f, params.iou_threshold, cap);
      int32_t* out = kept_boxes + bc * cap;
      int64_t kept = 0;
      for (int64_t k = 0; k < count && kept < cap; ++k) {
        if (problem.kept[k]) out[kept++] = order[k];
      }
      kept_counts[bc] = kept;
    }
    if (memory != nullptr) scratch.Free(memory);
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for ", n, " boxes");
  return Status::Ok();
}

void WriteSelectedRows(const int32_t* kept_boxes, const int64_t* kept_counts, int64_t batch, int64_t classes,
                       int64_t cap, int64_t* rows) {
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t bc = b * classes + c;
      for (int64_t k = 0; k < kept_counts[bc]; ++k, ++row) {
        rows[3 * row + 0] = b;
        rows[3 * row + 1] = c;
        rows[3 * row + 2] = kept_boxes[bc * cap + k];
      }
    }
  }
}

}  // namespace opbridge::cpu
