// The drivers every NMS-family kernel shares: they split a call into independent greedy
// problems (one per category of a box list, or one per batch and class of the multi-class
// layout), order each by score, hand it to the op's Problem and collect the kept boxes.
// Problems run as parallel tasks and write only their own results, so the output does not
// depend on the thread count; one problem is sequential (greedy NMS is by nature).
//
// A Problem (nms.cc's AxisAlignedProblem, nms_rotated.cc's RotatedProblem, ...) holds the op's
// parameters and, once carved out of scratch memory, one problem's boxes in processing order:
//   static size_t Bytes(int64_t count);                  scratch for `count` candidates
//   void Carve(Arena* arena, int64_t count);
//   template <class T> void Gather(const T* boxes, const int32_t* positions, int64_t count);
//   void Suppress(int64_t count, int64_t max_kept);      fills kept[0, count)
//   uint8_t* kept;
// and, for MatchPerBatchAndClass (ops that report which kept box suppressed which):
//   void Suppress(int64_t count, int64_t max_kept, int32_t* first_suppressor);
// Each task copies the prototype Problem the kernel passes and carves its own memory.
//
// Boxes and scores are float, or half storage (shared::Float16, BFloat16): each value is read as
// the float it is, as it is read (Gather converts a problem's boxes into its float32 copies, the
// score order and filter convert each score), so a half call picks exactly what the float32 kernel
// picks on the half values.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/half_storage.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/greedy_nms.h"

namespace opbridge::cpu {

// Runs the `problems` (batch, class) problems as at most 64 parallel tasks, each a contiguous
// range [begin, end) given to one call of fn(begin, end), so that a task takes its scratch memory
// once for its whole range.
template <class Fn>
Status ParallelForProblemRanges(const TaskRunner& runner, int64_t problems, Fn&& fn) {
  if (problems <= 0) return Status::Ok();
  const int64_t per_task = (problems + 63) / 64;
  const int64_t tasks = (problems + per_task - 1) / per_task;
  return ParallelFor(runner, static_cast<size_t>(tasks), [&](size_t task) {
    const int64_t begin = static_cast<int64_t>(task) * per_task;
    fn(begin, std::min(problems, begin + per_task));
  });
}

// Writes the positions and values (as floats) of the scores > threshold (a NaN never is); returns
// the count.
template <class T>
int64_t FilterAbove(const T* scores, int64_t n, float threshold, int32_t* positions, float* values);

// Groups ranks 0..n-1 (positions in score order) by category, keeping rank order inside each
// category. Writes the grouped ranks and the start of every run (runs + 1 entries).
void GroupByCategory(const int64_t* categories, const int32_t* order, int64_t n, int32_t* grouped,
                     std::vector<int64_t>* run_starts);

// Candidates per task when many small problems are batched into one task.
constexpr int64_t kTaskCandidates = 4096;

// A box list, optionally split into categories that do not suppress each other: writes the
// kept indices to keep (room for n) in descending score order, ties by index, and their count.
template <class Problem, class T>
Status KeepPerCategory(const Problem& prototype, const T* boxes, const T* scores, const int64_t* categories,
                       int64_t n, int64_t* keep, int64_t* num_kept, ScratchAllocator& scratch,
                       const TaskRunner& runner) {
  *num_kept = 0;
  if (n == 0) return Status::Ok();
  // Per call: the score order, the ranks grouped by category, and a kept flag per rank.
  const size_t call_bytes = ArenaBytes<int32_t>(n) * 2 + ArenaBytes<uint8_t>(n) +
                            ArenaBytes<uint64_t>(ScoreOrderScratchWords(n));
  ScratchBlock call_block(scratch, call_bytes);
  if (call_block.data() == nullptr) return Status::Error("could not allocate ", call_bytes, " bytes of scratch memory");
  Arena call(call_block.data(), call_bytes);
  int32_t* order = call.Take<int32_t>(n);
  int32_t* grouped = call.Take<int32_t>(n);
  uint8_t* kept_by_rank = call.Take<uint8_t>(n);
  void* sort_scratch = call.Take<uint64_t>(ScoreOrderScratchWords(n));
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
    const size_t bytes = ArenaBytes<int32_t>(largest) + Problem::Bytes(largest);
    ScratchBlock block(scratch, bytes);
    if (block.data() == nullptr) {
      out_of_memory = true;
      return;
    }
    Arena arena(block.data(), bytes);
    int32_t* positions = arena.Take<int32_t>(largest);
    Problem problem = prototype;
    problem.Carve(&arena, largest);
    for (size_t run = first; run < last; ++run) {
      const int32_t* ranks = grouped + run_starts[run];
      const int64_t count = run_starts[run + 1] - run_starts[run];
      for (int64_t k = 0; k < count; ++k) positions[k] = order[ranks[k]];
      problem.Gather(boxes, positions, count);
      problem.Suppress(count, -1);
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

// The multi-class layout: boxes [batch, n, box_size], scores [batch, classes, n]. Per (b, c)
// problem, the boxes scoring > score_threshold take part and at most `cap` are kept: their box
// indices in descending score order go to kept_boxes[(b * classes + c) * cap ...] and their count
// to kept_counts[b * classes + c].
template <class Problem, class T>
Status KeepPerBatchAndClass(const Problem& prototype, const T* boxes, int64_t box_size, const T* scores,
                            int64_t batch, int64_t classes, int64_t n, float score_threshold, int64_t cap,
                            int32_t* kept_boxes, int64_t* kept_counts, ScratchAllocator& scratch,
                            const TaskRunner& runner) {
  const int64_t problems = batch * classes;
  std::fill(kept_counts, kept_counts + problems, int64_t{0});
  if (problems == 0 || n == 0 || cap == 0) return Status::Ok();
  // A task filters a problem's candidates into buffers of n, then takes scratch sized for the
  // candidates only (usually a small fraction of n), reusing it while it is large enough.
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelForProblemRanges(runner, problems, [&](int64_t begin, int64_t end) {
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
             ArenaBytes<uint64_t>(ScoreOrderScratchWords(count)) +
             Problem::Bytes(count);
    };
    ReusedScratchBlock block(scratch);
    for (int64_t bc = begin; bc < end; ++bc) {
      const int64_t b = bc / classes;
      const int64_t count = FilterAbove(scores + bc * n, n, score_threshold, candidates, candidate_scores);
      void* memory = block.Reserve(problem_bytes(std::max<int64_t>(count, 256)));
      if (memory == nullptr) {
        out_of_memory = true;
        return;
      }
      Arena arena(memory, block.size());
      int32_t* order = arena.Take<int32_t>(count);
      void* sort_scratch = arena.Take<uint64_t>(ScoreOrderScratchWords(count));
      Problem problem = prototype;
      problem.Carve(&arena, count);
      ScoreOrder(candidate_scores, count, order, sort_scratch);
      for (int64_t k = 0; k < count; ++k) order[k] = candidates[order[k]];
      problem.Gather(boxes + b * n * box_size, order, count);
      problem.Suppress(count, cap);
      int32_t* out = kept_boxes + bc * cap;
      int64_t kept = 0;
      for (int64_t k = 0; k < count && kept < cap; ++k) {
        if (problem.kept[k]) out[kept++] = order[k];
      }
      kept_counts[bc] = kept;
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for ", n, " boxes");
  return Status::Ok();
}

// Writes the (batch, class, box) rows of KeepPerBatchAndClass's results, batch-major, then
// class, then score order, to rows [sum of kept_counts, 3].
void WriteSelectedRows(const int32_t* kept_boxes, const int64_t* kept_counts, int64_t batch, int64_t classes,
                       int64_t cap, int64_t* rows);

// The multi-class layout for ops that report which kept box suppressed which box (nms_match):
// boxes [batch, n, box_size], scores [batch, classes, n]. Every box of a (b, c) problem takes part
// (no score filter, no cap). A box j that is not kept was suppressed by the earliest kept box i
// (in processing order) that suppresses it: GreedySuppress's first_suppressor, which is the i
// that the classic loop ("each kept box, in order, suppresses every later box still standing")
// records for j. The pairs (i, j) of box indices whose i scores > report_threshold (a NaN score
// never does) go to pairs[2 * ((b * classes + c) * n + r) ...] for r < pair_counts[b * classes + c],
// ordered by i in processing order, then by j in processing order.
template <class Problem, class T>
Status MatchPerBatchAndClass(const Problem& prototype, const T* boxes, int64_t box_size, const T* scores,
                             int64_t batch, int64_t classes, int64_t n, float report_threshold, int32_t* pairs,
                             int64_t* pair_counts, ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t problems = batch * classes;
  std::fill(pair_counts, pair_counts + problems, int64_t{0});
  if (problems == 0 || n == 0) return Status::Ok();
  // Every problem has all n boxes, so a task takes its memory once and reuses it.
  const int64_t sort_words = ScoreOrderScratchWords(n);
  const size_t bytes = ArenaBytes<int32_t>(n) * 3 + ArenaBytes<uint64_t>(sort_words) + Problem::Bytes(n);
  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelForProblemRanges(runner, problems, [&](int64_t begin, int64_t end) {
    ScratchBlock block(scratch, bytes);
    if (block.data() == nullptr) {
      out_of_memory = true;
      return;
    }
    Arena arena(block.data(), bytes);
    int32_t* order = arena.Take<int32_t>(n);
    int32_t* first = arena.Take<int32_t>(n);
    int32_t* next = arena.Take<int32_t>(n);  // per processing position: where its next pair goes
    void* sort_scratch = arena.Take<uint64_t>(sort_words);
    Problem problem = prototype;
    problem.Carve(&arena, n);
    for (int64_t bc = begin; bc < end; ++bc) {
      const int64_t b = bc / classes;
      const T* problem_scores = scores + bc * n;
      ScoreOrder(problem_scores, n, order, sort_scratch);
      problem.Gather(boxes + b * n * box_size, order, n);
      problem.Suppress(n, -1, first);
      // Count the boxes each kept box suppressed first, give the reporting ones consecutive
      // ranges in processing order, then place the suppressed boxes in processing order.
      std::fill(next, next + n, int32_t{0});
      for (int64_t j = 0; j < n; ++j) {
        if (first[j] >= 0) ++next[first[j]];
      }
      int32_t total = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t suppressed = next[i];
        next[i] = shared::Load(problem_scores + order[i]) > report_threshold ? total : -1;
        if (next[i] >= 0) total += suppressed;
      }
      int32_t* out = pairs + 2 * bc * n;
      for (int64_t j = 0; j < n; ++j) {
        const int32_t i = first[j];
        if (i < 0 || next[i] < 0) continue;
        int32_t* pair = out + 2 * int64_t{next[i]++};
        pair[0] = order[i];
        pair[1] = order[j];
      }
      pair_counts[bc] = total;
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for ", n, " boxes");
  return Status::Ok();
}

// Writes the (batch, class, kept box, suppressed box) rows of MatchPerBatchAndClass's results,
// batch-major, then class, then in the pairs' order, to rows [sum of pair_counts, 4].
void WriteMatchRows(const int32_t* pairs, const int64_t* pair_counts, int64_t batch, int64_t classes, int64_t n,
                    int64_t* rows);

}  // namespace opbridge::cpu
