// Axis-aligned NMS CUDA kernels (see nms.h). Every op runs the same steps:
//   1. a sort key per entry (kernels/shared/nms_layouts.h): its problem (image and class) above
//      its descending-score key, kNotACandidate for an entry below the score threshold;
//   2. a stable radix sort of (key, box index) pairs (CUB), entries in ascending index order, so
//      that every problem becomes a segment in score order, ties by index, candidates first;
//   3. per problem, its candidate count (a bisection for the first non-candidate);
//   4. greedy suppression, one block of kNmsTile threads per problem (kernels/shared/nms_tiles.h),
//      stopping at the problem's cap;
//   5. the op's outputs from the kept lists.
// Scratch comes from the caller's device allocator (ORT's CUDA allocator), CUB's temporary
// storage included. The only synchronization is the count copy of the variable-size outputs.
#include "kernels/cuda/nms.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/nms_layouts.h"
#include "kernels/shared/nms_tiles.h"

namespace opbridge::cuda {
namespace {

using shared::NmsCandidate;
using shared::NmsProblems;

// ---- step 1: keys ---------------------------------------------------------------------------------

__global__ void ScoreKeysKernel(const float* scores, int64_t n, uint32_t* keys, int32_t* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, i, n) {
    keys[i] = shared::DescendingScoreKey(scores[i]);
    positions[i] = static_cast<int32_t>(i);
  }
}

__global__ void MulticlassKeysKernel(const float* scores, int64_t n, float score_threshold, int64_t count,
                                     uint64_t* keys, int32_t* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) {
    keys[i] = shared::MulticlassNmsKey(scores, n, score_threshold, i);
    positions[i] = static_cast<int32_t>(i % n);
  }
}

__global__ void TrtKeysKernel(TrtBatchedNmsParams p, const float* scores, int64_t num_boxes, int64_t classes,
                              int64_t count, uint64_t* keys, int32_t* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) {
    keys[i] = shared::TrtBatchedNmsKey(p, scores, num_boxes, classes, i);
    positions[i] = static_cast<int32_t>((i / classes) % num_boxes);
  }
}

// ---- step 3: candidates per problem -----------------------------------------------------------------

__global__ void CountCandidatesKernel(const uint64_t* keys, int64_t segment, int64_t limit, int64_t problems,
                                      int64_t* taking_part) {
  OPBRIDGE_CUDA_FOR(int64_t, p, problems) {
    const int64_t count = shared::CountCandidates(keys + p * segment, segment);
    taking_part[p] = count < limit ? count : limit;
  }
}

// ---- step 4: greedy suppression --------------------------------------------------------------------

// Problem p's candidates are sorted_positions[p * segment ...], taking_part[p] of them (all
// `segment` when taking_part is null); its kept candidates go to kept[p * kept_capacity ...] (at
// most min(cap, kept_capacity)) and their count to kept_counts[p].
__global__ void __launch_bounds__(shared::kNmsTile)
    GreedyKernel(NmsProblems s, const int32_t* sorted_positions, int64_t segment, const int64_t* taking_part,
                 int64_t problems, int64_t kept_capacity, NmsCandidate* kept, int64_t* kept_counts) {
  __shared__ NmsCandidate tile[shared::kNmsTile];
  __shared__ uint32_t mask[shared::kNmsTile * shared::kNmsTileWords];
  __shared__ uint8_t suppressed[shared::kNmsTile];
  __shared__ int16_t chosen[shared::kNmsTile];
  __shared__ int64_t kept_count;
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t p = blockIdx.x; p < problems; p += gridDim.x) {
    const int64_t count = taking_part != nullptr ? taking_part[p] : segment;
    const int32_t* positions = sorted_positions + p * segment;
    NmsCandidate* problem_kept = kept + p * kept_capacity;
    const int64_t room = count < kept_capacity ? count : kept_capacity;
    if (t == 0) kept_count = 0;
    __syncthreads();
    for (int64_t start = 0; start < count && kept_count < room; start += shared::kNmsTile) {
      const int in_tile = static_cast<int>(count - start < shared::kNmsTile ? count - start : shared::kNmsTile);
      if (t < in_tile) {
        tile[t] = shared::LoadCandidate(s, p, positions[start + t]);
        suppressed[t] = shared::SuppressedByKept(s, problem_kept, kept_count, tile[t]);
      }
      __syncthreads();
      if (t < in_tile) {
        for (int w = 0; w < shared::kNmsTileWords; ++w) {
          // A suppressed candidate is never kept, so its row is never read.
          mask[t * shared::kNmsTileWords + w] = suppressed[t] ? 0u : shared::TileMaskWord(s, tile, in_tile, t, w);
        }
      }
      __syncthreads();
      if (t == 0) {
        const int added = shared::ResolveTile(mask, suppressed, in_tile, room - kept_count, chosen);
        for (int k = 0; k < added; ++k) problem_kept[kept_count + k] = tile[chosen[k]];
        kept_count += added;
      }
      __syncthreads();
    }
    if (t == 0) kept_counts[p] = kept_count;
    __syncthreads();
  }
}

Status RunGreedy(const NmsProblems& s, const int32_t* sorted_positions, int64_t segment, const int64_t* taking_part,
                 int64_t problems, int64_t kept_capacity, NmsCandidate* kept, int64_t* kept_counts, Stream stream) {
  const unsigned int blocks = static_cast<unsigned int>(problems < 65535 ? problems : 65535);
  GreedyKernel<<<blocks, shared::kNmsTile, 0, stream>>>(s, sorted_positions, segment, taking_part, problems,
                                                         kept_capacity, kept, kept_counts);
  return LaunchStatus("the NMS suppression kernel", stream);
}

// ---- step 5: outputs -------------------------------------------------------------------------------

// The box positions of kept candidates, as the output's index type.
template <class Index>
__global__ void KeptPositionsKernel(const NmsCandidate* kept, int64_t count, Index* positions) {
  OPBRIDGE_CUDA_FOR(int64_t, k, count) { positions[k] = kept[k].position; }
}

__global__ void TotalKernel(const int64_t* offsets, const int64_t* counts, int64_t problems, int64_t* total) {
  *total = offsets[problems - 1] + counts[problems - 1];
}

__global__ void SelectedRowsKernel(const NmsCandidate* kept, const int64_t* kept_counts, const int64_t* offsets,
                                   int64_t classes, int64_t capacity, int64_t problems, int64_t* rows) {
  OPBRIDGE_CUDA_FOR(int64_t, p, problems) {
    for (int64_t k = 0; k < kept_counts[p]; ++k) {
      int64_t* row = rows + 3 * (offsets[p] + k);
      row[0] = p / classes;
      row[1] = p % classes;
      row[2] = kept[p * capacity + k].position;
    }
  }
}

__global__ void MergeKeysKernel(const float* scores, int64_t num_boxes, int64_t classes, int64_t capacity,
                                const int64_t* kept_counts, const int32_t* kept_positions, int64_t count,
                                uint64_t* keys, int64_t* entries) {
  OPBRIDGE_CUDA_FOR(int64_t, e, count) {
    keys[e] = shared::TrtMergeKey(scores, num_boxes, classes, capacity, kept_counts, kept_positions, e);
    entries[e] = e;
  }
}

__global__ void TrtDefaultsKernel(int64_t rows, int64_t row_size, float* dets, int32_t* labels, int32_t* index) {
  OPBRIDGE_CUDA_FOR(int64_t, r, rows) {
    for (int64_t v = 0; v < row_size; ++v) dets[r * row_size + v] = 0.0f;
    labels[r] = -1;
    if (index != nullptr) index[r] = -1;
  }
}

__global__ void TrtDetectionsKernel(TrtBatchedNmsParams p, const float* boxes, int64_t loc_classes, const float* scores,
                                    int64_t num_boxes, int64_t classes, int64_t capacity, const int32_t* kept_positions,
                                    const uint64_t* merged_keys, const int64_t* merged_entries, int64_t rows_per_image,
                                    int64_t count, float* dets, int32_t* labels, int32_t* index) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) {
    const int64_t b = i / rows_per_image, row = i % rows_per_image;
    const int64_t at = b * classes * capacity + row;
    if (static_cast<uint32_t>(merged_keys[at]) == shared::kNotACandidate) continue;
    shared::WriteTrtDetection(p, boxes, loc_classes, scores, num_boxes, classes, capacity, kept_positions, b, row,
                              merged_entries[at], dets, labels, index);
  }
}

// ---- helpers ---------------------------------------------------------------------------------------

int BitsFor(int64_t values) {  // bits that hold 0 .. values - 1
  int bits = 0;
  while (bits < 62 && (int64_t{1} << bits) < values) ++bits;
  return bits;
}


// A stable radix sort of (key, value) pairs over bits [0, end_bit) of the keys.
template <class Key, class Value>
Status SortPairs(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t count,
                 int end_bit, ScratchAllocator& scratch, Stream stream) {
  size_t bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                                     values_out, count, 0, end_bit, stream),
                                     "sizing the NMS score sort"));
  ScratchBlock temp(scratch, bytes);
  if (temp.data() == nullptr) return OutOfScratch(bytes);
  return CudaError(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys_in, keys_out, values_in, values_out, count,
                                                   0, end_bit, stream),
                   "the NMS score sort");
}

// The count a variable-size output needs on the host: one copy, one synchronization.
Status CopyCountToHost(const int64_t* device_count, int64_t* count, Stream stream) {
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemcpyAsync(count, device_count, sizeof(int64_t), cudaMemcpyDeviceToHost,
                                                     stream),
                                     "copying the NMS output count to the host"));
  return CudaError(cudaStreamSynchronize(stream), "the NMS kernels");
}


// The arrays of steps 1 to 4 for `problems` segments of `segment` entries, each keeping at most
// kept_capacity candidates.
struct SegmentArrays {
  uint64_t *keys, *sorted_keys;
  int32_t *positions, *sorted_positions;
  int64_t *taking_part, *kept_counts;
  NmsCandidate* kept;

  static size_t Bytes(int64_t problems, int64_t segment, int64_t kept_capacity) {
    const int64_t entries = problems * segment;
    return ArenaBytes<uint64_t>(entries) * 2 + ArenaBytes<int32_t>(entries) * 2 + ArenaBytes<int64_t>(problems) * 2 +
           ArenaBytes<NmsCandidate>(problems * kept_capacity);
  }
  void Carve(Arena* arena, int64_t problems, int64_t segment, int64_t kept_capacity) {
    const int64_t entries = problems * segment;
    keys = arena->Take<uint64_t>(entries);
    sorted_keys = arena->Take<uint64_t>(entries);
    positions = arena->Take<int32_t>(entries);
    sorted_positions = arena->Take<int32_t>(entries);
    taking_part = arena->Take<int64_t>(problems);
    kept_counts = arena->Take<int64_t>(problems);
    kept = arena->Take<NmsCandidate>(problems * kept_capacity);
  }
};

// Steps 2 to 4 once the keys and positions of every entry are written: the sort, the first
// `limit` candidates of each problem, the greedy suppression.
Status SuppressSegments(const NmsProblems& s, const SegmentArrays& a, int64_t problems, int64_t segment, int64_t limit,
                        int64_t kept_capacity, ScratchAllocator& scratch, Stream stream) {
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(a.keys, a.sorted_keys, a.positions, a.sorted_positions, problems * segment,
                                     32 + BitsFor(problems), scratch, stream));
  CountCandidatesKernel<<<BlocksFor(problems), kThreads, 0, stream>>>(a.sorted_keys, segment, limit, problems,
                                                                      a.taking_part);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS candidate count kernel", stream));
  return RunGreedy(s, a.sorted_positions, segment, a.taking_part, problems, kept_capacity, a.kept, a.kept_counts,
                   stream);
}

}  // namespace

Status Nms(const NmsParams& params, const float* boxes, const float* scores, const int64_t* categories, int64_t n,
           const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream) {
  int64_t* output = nullptr;
  if (n == 0) return allocate(0, &output);
  const size_t bytes = ArenaBytes<uint32_t>(n) * 2 + ArenaBytes<int32_t>(n) * 2 + ArenaBytes<NmsCandidate>(n) +
                       ArenaBytes<int64_t>(1);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  auto* keys = arena.Take<uint32_t>(n);
  auto* sorted_keys = arena.Take<uint32_t>(n);
  auto* positions = arena.Take<int32_t>(n);
  auto* sorted_positions = arena.Take<int32_t>(n);
  auto* kept = arena.Take<NmsCandidate>(n);
  auto* kept_count = arena.Take<int64_t>(1);
  ScoreKeysKernel<<<BlocksFor(n), kThreads, 0, stream>>>(scores, n, keys, positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS key kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(keys, sorted_keys, positions, sorted_positions, n, 32, device_scratch, stream));
  const NmsProblems s{boxes, 1, 0, 0, 4, categories, static_cast<float>(params.offset), params.iou_threshold};
  OPBRIDGE_RETURN_IF_ERROR(RunGreedy(s, sorted_positions, n, nullptr, 1, n, kept, kept_count, stream));
  int64_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(kept_count, &count, stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(count, &output));
  if (count == 0) return Status::Ok();
  KeptPositionsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(kept, count, output);
  return LaunchStatus("the NMS output kernel", stream);
}

Status MulticlassNms(const MulticlassNmsParams& params, const float* boxes, const float* scores, int64_t batch,
                     int64_t classes, int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch,
                     Stream stream) {
  int64_t* output = nullptr;
  const int64_t problems = batch * classes;
  const int64_t cap = params.max_output_boxes_per_class < 0 || params.max_output_boxes_per_class > n
                          ? n : params.max_output_boxes_per_class;
  if (problems == 0 || cap == 0) return allocate(0, &output);
  const int64_t entries = problems * n;
  size_t scan_bytes = 0;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int64_t*>(nullptr),
                                                                   static_cast<int64_t*>(nullptr), problems, stream),
                                     "sizing the NMS row scan"));
  const size_t bytes = SegmentArrays::Bytes(problems, n, cap) + ArenaBytes<int64_t>(problems) +
                       ArenaBytes<int64_t>(1) + ArenaBytes<char>(static_cast<int64_t>(scan_bytes));
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  SegmentArrays a;
  a.Carve(&arena, problems, n, cap);
  auto* offsets = arena.Take<int64_t>(problems);
  auto* total = arena.Take<int64_t>(1);
  auto* scan_temp = arena.Take<char>(static_cast<int64_t>(scan_bytes));
  MulticlassKeysKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(scores, n, params.score_threshold, entries, a.keys,
                                                                   a.positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS key kernel", stream));
  const NmsProblems s{boxes, classes, n * 4, 0, 4, nullptr, 0.0f, params.iou_threshold};
  OPBRIDGE_RETURN_IF_ERROR(SuppressSegments(s, a, problems, n, n, cap, device_scratch, stream));
  const int64_t* kept_counts = a.kept_counts;
  const NmsCandidate* kept = a.kept;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, kept_counts, offsets,
                                                                   problems, stream),
                                     "the NMS row scan"));
  TotalKernel<<<1, 1, 0, stream>>>(offsets, kept_counts, problems, total);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the NMS row count kernel", stream));
  int64_t rows = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(total, &rows, stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(rows, &output));
  if (rows == 0) return Status::Ok();
  SelectedRowsKernel<<<BlocksFor(problems), kThreads, 0, stream>>>(kept, kept_counts, offsets, classes, cap, problems,
                                                                   output);
  return LaunchStatus("the NMS output kernel", stream);
}

Status TrtBatchedNms(const TrtBatchedNmsParams& params, const float* boxes, int64_t loc_classes, const float* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, float* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& device_scratch, Stream stream) {
  const int64_t keep = params.keep_topk, rows = batch * keep;
  if (rows == 0) return Status::Ok();
  TrtDefaultsKernel<<<BlocksFor(rows), kThreads, 0, stream>>>(rows, 5, dets, labels, index);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS output kernel", stream));
  if (num_boxes == 0 || classes == 0) return Status::Ok();
  const int64_t problems = batch * classes, entries = problems * num_boxes;
  const int64_t top_k = params.topk > 0 && params.topk <= num_boxes ? params.topk : num_boxes;
  // A class contributes at most keep_topk detections to its image: it keeps at most that many.
  const int64_t capacity = keep < top_k ? keep : top_k, merged = problems * capacity;
  const size_t bytes = SegmentArrays::Bytes(problems, num_boxes, capacity) + ArenaBytes<int32_t>(merged) +
                       ArenaBytes<uint64_t>(merged) * 2 + ArenaBytes<int64_t>(merged) * 2;
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  SegmentArrays a;
  a.Carve(&arena, problems, num_boxes, capacity);
  auto* kept_positions = arena.Take<int32_t>(merged);
  auto* merge_keys = arena.Take<uint64_t>(merged);
  auto* merged_keys = arena.Take<uint64_t>(merged);
  auto* merge_entries = arena.Take<int64_t>(merged);
  auto* merged_entries = arena.Take<int64_t>(merged);
  TrtKeysKernel<<<BlocksFor(entries), kThreads, 0, stream>>>(params, scores, num_boxes, classes, entries, a.keys,
                                                            a.positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS key kernel", stream));
  const NmsProblems s{boxes, classes, num_boxes * loc_classes * 4, loc_classes == 1 ? 0 : 4, loc_classes * 4, nullptr,
                      0.0f, params.iou_threshold};
  OPBRIDGE_RETURN_IF_ERROR(SuppressSegments(s, a, problems, num_boxes, top_k, capacity, device_scratch, stream));
  KeptPositionsKernel<<<BlocksFor(merged), kThreads, 0, stream>>>(a.kept, merged, kept_positions);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS merge kernel", stream));
  MergeKeysKernel<<<BlocksFor(merged), kThreads, 0, stream>>>(scores, num_boxes, classes, capacity, a.kept_counts,
                                                             kept_positions, merged, merge_keys, merge_entries);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the batched NMS merge kernel", stream));
  OPBRIDGE_RETURN_IF_ERROR(SortPairs(merge_keys, merged_keys, merge_entries, merged_entries, merged,
                                     32 + BitsFor(batch), device_scratch, stream));
  const int64_t per_image = keep < classes * capacity ? keep : classes * capacity;
  TrtDetectionsKernel<<<BlocksFor(batch * per_image), kThreads, 0, stream>>>(
      params, boxes, loc_classes, scores, num_boxes, classes, capacity, kept_positions, merged_keys, merged_entries,
      per_image, batch * per_image, dets, labels, index);
  return LaunchStatus("the batched NMS output kernel", stream);
}

}  // namespace opbridge::cuda
