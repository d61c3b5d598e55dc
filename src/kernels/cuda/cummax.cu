// Running-extreme scans on the GPU (cummax, cummin, corner pooling): the input viewed as
// [outer, steps, inner] around the scanned axis, every line cut into segments that are scanned in
// parallel, joined by the running extremes of the segments before them (the combination of
// kernels/shared/extreme_scan.h, which makes the result the serial scan's exactly).
//
// Two layouts, both reading and writing whole 128-byte lines per warp:
//   inner > 1 (any axis but the last): one thread per (line, segment), consecutive threads on
//     consecutive lines (the inner axis), each walking its segment's steps with ScanSegment; a warp's
//     32 loads of a step are one contiguous row.
//   inner = 1 (the last axis: each line contiguous): one warp per (line, segment), 32 consecutive
//     elements at a time, an inclusive scan across the warp's lanes by shuffles (5 levels), joined
//     to the running extreme of the elements before.
// Lines are cut into segments only where the lines alone give too little parallel work (a few
// long lines): then a first pass writes each segment's result to scratch, the segment results are
// scanned by the same function (a smaller problem, [outer, segments, inner]), and a second pass
// scans each segment from the result of the segments before it. Otherwise one pass.
//
// Expected times on an H100 for the bench's cummax.rows ([1, 128, 256, 256], float32; values and
// int64 indices: 33.5 MB read, 100 MB written, some 45 us of DRAM time at 3 TB/s): along dim 2
// (inner 256) 32,768 lines of 256 steps, cut in eight (262,144 threads, each walking 32 steps with four
// loads in flight: some 4 MB in flight, where 3 TB/s at ~600 ns of latency needs ~1.8 MB; cut in two,
// 65,536 threads kept ~1 MB in flight and DRAM half busy; the first pass reads the input once more):
// some 45-50 us, bounded by DRAM (before: 50-60 us); along dim 3 (inner 1) 32,768 warps, one per
// row, 8 iterations of a load and a 5-level shuffle scan (about 50 instructions): some 13 us of
// issue under 45 us of traffic. torch.cummax: 0.088 and
// 0.144 ms on an H200 (gpu.md). The longest dependent chain is one segment's walk (at most 32
// selections along dim 2, 8 warp steps along dim 3 in these cases).
#include "kernels/cuda/cummax.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/extreme_scan.h"

namespace opbridge::cuda {
namespace {

using shared::ExtremeRun;

// inner > 1: cut lines when fewer than this many (line, segment) threads would run, into segments
// of at least kMinLaneSegment steps.
constexpr int64_t kLaneTargetThreads = int64_t{1} << 18;
constexpr int64_t kMinLaneSegment = 32;
// inner = 1: cut lines when fewer than this many warps would run, into segments of at least
// kMinRowSegment elements (a multiple of the warp's 32).
constexpr int64_t kRowTargetWarps = int64_t{1} << 12;
constexpr int64_t kMinRowSegment = 256;
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = kThreads / kWarp;

// Where a pass reads the results of the segments before (null: one segment per line) and where it
// writes its segments' results (null: it writes the outputs instead).
template <class T>
struct SegmentResults {
  const T* carry_values = nullptr;
  const int64_t* carry_steps = nullptr;
  T* total_values = nullptr;
  int64_t* total_steps = nullptr;
};

template <class T>
__device__ ExtremeRun<T> CarryOf(const SegmentResults<T>& results, int64_t at) {
  ExtremeRun<T> carry;
  carry.value = results.carry_values[at];
  carry.step = results.carry_steps != nullptr ? results.carry_steps[at] : 0;
  return carry;
}

template <class T>
__device__ void WriteTotal(const SegmentResults<T>& results, int64_t at, const ExtremeRun<T>& run) {
  results.total_values[at] = run.value;
  if (results.total_steps != nullptr) results.total_steps[at] = run.step;
}

// inner > 1: thread t is (line o * inner + j, segment), t = (o * segments + segment) * inner + j.
template <Extreme kWhich, class T, class Index>
__global__ void LaneScanKernel(const T* in, const int64_t* steps_in, Index outer, Index steps, Index inner,
                               bool reverse, Index segment_length, Index segments, SegmentResults<T> results,
                               T* values, int64_t* steps_out) {
  const Index count = outer * segments * inner;
  const bool totals = results.total_values != nullptr;
  OPBRIDGE_CUDA_FOR(Index, t, count) {
    const Index j = t % inner, rest = t / inner;
    const Index segment = rest % segments, o = rest / segments;
    shared::ScanLine<T, Index> line;
    line.in = in;
    line.steps_in = steps_in;
    line.values = totals ? nullptr : values;
    line.steps_out = totals ? nullptr : steps_out;
    line.base = o * steps * inner + j + (reverse ? (steps - 1) * inner : 0);
    line.stride = reverse ? -inner : inner;
    const Index begin = segment * segment_length;
    const Index end = steps - begin < segment_length ? steps : begin + segment_length;
    const bool has_carry = segment > 0 && results.carry_values != nullptr;
    ExtremeRun<T> carry{};
    if (has_carry) carry = CarryOf(results, t - inner);  // the segment before, same line
    const ExtremeRun<T> run = shared::ScanSegment<kWhich>(line, begin, end, has_carry, carry);
    if (totals) WriteTotal(results, t, run);
  }
}

// inner = 1: warp w is (line, segment), w = line * segments + segment.
template <Extreme kWhich, class T, class Index>
__global__ void RowScanKernel(const T* in, const int64_t* steps_in, Index lines, Index steps, bool reverse,
                              Index segment_length, Index segments, SegmentResults<T> results, T* values,
                              int64_t* steps_out) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const Index first_warp = static_cast<Index>(blockIdx.x) * kWarpsPerBlock + static_cast<Index>(threadIdx.x / kWarp);
  const Index all_warps = static_cast<Index>(gridDim.x) * kWarpsPerBlock;
  const bool totals = results.total_values != nullptr;
  for (Index w = first_warp; w < lines * segments; w += all_warps) {  // the same trip count for a warp's lanes
    const Index segment = w % segments, line = w / segments;
    const Index base = line * steps + (reverse ? steps - 1 : 0);
    const Index stride = reverse ? -1 : 1;
    const Index begin = segment * segment_length;
    const Index end = steps - begin < segment_length ? steps : begin + segment_length;
    bool has_carry = segment > 0 && results.carry_values != nullptr;
    ExtremeRun<T> carry{};
    if (has_carry) carry = CarryOf(results, w - 1);
    for (Index first = begin; first < end; first += kWarp) {
      const Index s = first + lane;
      const bool valid = s < end;  // lanes past the end come after every valid lane: they change no prefix
      const Index at = base + s * stride;
      ExtremeRun<T> run{};
      if (valid) {
        run.value = in[at];
        run.step = steps_in != nullptr ? steps_in[at] : static_cast<int64_t>(s);
      }
      for (int d = 1; d < kWarp; d *= 2) {  // inclusive scan over the lanes: lane l holds steps first..s
        ExtremeRun<T> before;
        before.value = __shfl_up_sync(kAll, run.value, d);
        before.step = __shfl_up_sync(kAll, run.step, d);
        if (lane >= d) run = shared::CombineRuns<kWhich>(before, run);
      }
      if (has_carry) run = shared::CombineRuns<kWhich>(carry, run);
      if (valid && !totals) {
        values[at] = run.value;
        if (steps_out != nullptr) steps_out[at] = run.step;
      }
      const Index remaining = end - first;
      const int last = remaining < kWarp ? static_cast<int>(remaining) - 1 : kWarp - 1;
      carry.value = __shfl_sync(kAll, run.value, last);
      carry.step = __shfl_sync(kAll, run.step, last);
      has_carry = true;
    }
    if (totals && lane == 0) WriteTotal(results, w, carry);
  }
}

unsigned int WarpBlocksFor(int64_t warps) { return BlocksFor(warps * kWarp); }

// How a problem's lines are cut: `segments` pieces of `length` steps (the last may be shorter).
struct Segments {
  int64_t count = 1;
  int64_t length = 0;
};

Segments PlanSegments(const ScanLayout& layout) {
  const bool rows = layout.inner == 1;
  const int64_t lines = layout.outer * layout.inner;
  const int64_t target = rows ? kRowTargetWarps : kLaneTargetThreads;
  const int64_t shortest = rows ? kMinRowSegment : kMinLaneSegment;
  Segments plan;
  plan.length = layout.steps;
  if (lines >= target || layout.steps <= shortest) return plan;
  const int64_t wanted = (target + lines - 1) / lines;
  const int64_t most = (layout.steps + shortest - 1) / shortest;
  const int64_t count = wanted < most ? wanted : most;
  plan.length = (layout.steps + count - 1) / count;
  if (rows) plan.length = (plan.length + kWarp - 1) / kWarp * kWarp;
  plan.count = (layout.steps + plan.length - 1) / plan.length;
  return plan;
}

template <Extreme kWhich, class T, class Index>
Status LaunchPass(const T* in, const int64_t* steps_in, const ScanLayout& layout, bool reverse, const Segments& plan,
                  const SegmentResults<T>& results, T* values, int64_t* steps_out, Stream stream) {
  const Index outer = static_cast<Index>(layout.outer), steps = static_cast<Index>(layout.steps);
  const Index length = static_cast<Index>(plan.length), segments = static_cast<Index>(plan.count);
  if (layout.inner == 1) {
    RowScanKernel<kWhich, T, Index><<<WarpBlocksFor(layout.outer * plan.count), kThreads, 0, stream>>>(
        in, steps_in, outer, steps, reverse, length, segments, results, values, steps_out);
    return LaunchStatus("the running-extreme row scan kernel", stream);
  }
  LaneScanKernel<kWhich, T, Index><<<BlocksFor(layout.outer * plan.count * layout.inner), kThreads, 0, stream>>>(
      in, steps_in, outer, steps, static_cast<Index>(layout.inner), reverse, length, segments, results, values,
      steps_out);
  return LaunchStatus("the running-extreme lane scan kernel", stream);
}

template <Extreme kWhich, class T>
Status Pass(const T* in, const int64_t* steps_in, const ScanLayout& layout, bool reverse, const Segments& plan,
            const SegmentResults<T>& results, T* values, int64_t* steps_out, Stream stream) {
  // Thread and warp counts are at most the element count, and offsets stay below it.
  if (FitsInt32(layout.outer * layout.steps * layout.inner)) {
    return LaunchPass<kWhich, T, int32_t>(in, steps_in, layout, reverse, plan, results, values, steps_out, stream);
  }
  return LaunchPass<kWhich, T, int64_t>(in, steps_in, layout, reverse, plan, results, values, steps_out, stream);
}

// Scans `in` ([outer, steps, inner]) into values and steps_out (null: values only); steps_in as in
// shared::ScanLine. Recursive on the segment results, each level smaller by the segment length.
template <Extreme kWhich, class T>
Status Scan(const T* in, const int64_t* steps_in, const ScanLayout& layout, bool reverse, T* values,
            int64_t* steps_out, ScratchAllocator& scratch, Stream stream) {
  if (layout.outer == 0 || layout.steps == 0 || layout.inner == 0) return Status::Ok();
  const Segments plan = PlanSegments(layout);
  if (plan.count == 1) {
    return Pass<kWhich, T>(in, steps_in, layout, reverse, plan, SegmentResults<T>{}, values, steps_out, stream);
  }
  // The segments' results, [outer, segments, inner], then their inclusive scan along the segments.
  const int64_t results_count = layout.outer * plan.count * layout.inner;
  const bool with_steps = steps_out != nullptr;
  const size_t bytes = ArenaBytes<T>(results_count) + (with_steps ? ArenaBytes<int64_t>(results_count) : 0);
  ScratchBlock block(scratch, bytes);  // on the stream's scratch: freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  SegmentResults<T> results;
  results.total_values = arena.Take<T>(results_count);
  results.total_steps = with_steps ? arena.Take<int64_t>(results_count) : nullptr;
  T* no_values = nullptr;  // the first pass writes the segments' results only
  OPBRIDGE_RETURN_IF_ERROR(Pass<kWhich>(in, steps_in, layout, reverse, plan, results, no_values, nullptr, stream));
  const ScanLayout results_layout{layout.outer, plan.count, layout.inner};
  OPBRIDGE_RETURN_IF_ERROR(Scan<kWhich>(results.total_values, results.total_steps, results_layout, false,
                                        results.total_values, results.total_steps, scratch, stream));
  SegmentResults<T> carries;
  carries.carry_values = results.total_values;
  carries.carry_steps = results.total_steps;
  return Pass<kWhich, T>(in, steps_in, layout, reverse, plan, carries, values, steps_out, stream);
}

template <class T>
Status ScanAxis(Extreme extreme, const T* in, const ScanLayout& layout, bool reverse, T* values, int64_t* indices,
                ScratchAllocator& scratch, Stream stream) {
  ClearStaleError();
  if (extreme == Extreme::kMax) {
    return Scan<Extreme::kMax>(in, nullptr, layout, reverse, values, indices, scratch, stream);
  }
  return Scan<Extreme::kMin>(in, nullptr, layout, reverse, values, indices, scratch, stream);
}

}  // namespace

template <class T>
Status CumMax(const CumMaxParams& params, const T* input, const Shape& shape, T* values, int64_t* indices,
              ScratchAllocator& scratch, Stream stream) {
  int64_t axis = 0;
  OPBRIDGE_RETURN_IF_ERROR(WrapCumMaxDim(params.dim, static_cast<int64_t>(shape.size()), &axis));
  return ScanAxis(params.extreme, input, CumMaxLayout(shape, axis), false, values, indices, scratch, stream);
}

template Status CumMax<float>(const CumMaxParams&, const float*, const Shape&, float*, int64_t*, ScratchAllocator&,
                              Stream);
template Status CumMax<double>(const CumMaxParams&, const double*, const Shape&, double*, int64_t*, ScratchAllocator&,
                               Stream);
template Status CumMax<int32_t>(const CumMaxParams&, const int32_t*, const Shape&, int32_t*, int64_t*,
                                ScratchAllocator&, Stream);
template Status CumMax<int64_t>(const CumMaxParams&, const int64_t*, const Shape&, int64_t*, int64_t*,
                                ScratchAllocator&, Stream);

Status CornerPool(const CornerPoolParams& params, const float* input, const Shape& shape, float* output,
                  ScratchAllocator& scratch, Stream stream) {
  OPBRIDGE_RETURN_IF_ERROR(CheckCornerPoolShape(shape));
  bool reverse = false;
  const ScanLayout layout = CornerPoolLayout(shape, params.mode, &reverse);
  return ScanAxis(Extreme::kMax, input, layout, reverse, output, nullptr, scratch, stream);
}

}  // namespace opbridge::cuda
