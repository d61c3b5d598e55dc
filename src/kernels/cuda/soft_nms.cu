// Soft-NMS CUDA kernel. Each pick depends on every earlier decay, so the picks are a sequence: the
// whole loop runs in one thread block (no launch per pick), and each step spreads over its threads:
//   1. every thread reads the picked box (the previous step's maximum) and decays its own contiguous
//      run of the remaining positions (of odd length: no shared-memory bank conflicts), counting the
//      boxes that fall below min_score;
//   2. a block scan of the counts (warp shuffles, one barrier) gives every thread the drops ahead of
//      each of its positions; mmcv's drop-and-move pass then has a closed form
//      (shared::SoftNmsMoverRank): the survivors in the first end - drops positions stay, each hole
//      there is recorded by rank (a second barrier, only in steps that drop a box), and each survivor
//      beyond moves into the hole of its rank from the end;
//   3. the next pick is the maximum of shared::SoftNmsPickKey over the survivors' final positions
//      (warp maxima, a third barrier, then every warp reduces them).
// mmcv's swap of the picked box with the box at position i is folded into step 1: the thread whose
// run holds the picked box's position decays the box from position i in its place and writes it
// there after the first barrier, once every thread has read the picked box.
//
// The state, 32 bytes a box (coordinates, score, area, index, hole ranks), is kept in shared memory
// when it fits (up to about 7,000 boxes on an H100's 227 KiB), else in device scratch (L2-resident
// for any realistic count).
//
// Expected time on an H100 for soft_nms.dense (5,000 boxes, ~1,500 picks, ~3,500 drops): a step is
// bounded by its chain, not its traffic: ~10 positions a thread (30 cycles of shared-memory latency
// and ~40 instructions each, the IEEE division the longest), three barriers and four 5-level shuffle
// reductions or scans (~100 cycles each): ~1,500-2,000 cycles, ~1 us at 1.7 GHz, so ~1.5-2 ms for
// the whole call, against the CPU kernel's single thread (18.7 ms on the 2-core development machine,
// perhaps 8-10 ms on a server core). Not yet measured on a GPU.
#include "kernels/cuda/soft_nms.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/soft_nms_steps.h"

namespace opbridge::cuda {
namespace {

// One block of 512: ~10 positions a thread at 5,000 boxes. More threads would shorten the decay
// run but lengthen every barrier and reduction, which dominate a step; fewer, the reverse.
constexpr int kSoftNmsThreads = 512;
constexpr int kWarps = kSoftNmsThreads / 32;
constexpr unsigned int kAllLanes = 0xFFFFFFFFu;

// The boxes by position, moved as mmcv moves them (the swap, the drop-and-move pass), and a step's
// holes by rank.
struct State : shared::SoftNmsBoxes<int32_t> {
  int32_t* holes;
};

// Eight arrays of n 4-byte words, each rounded up to 16 bytes.
__host__ __device__ inline int64_t PaddedCount(int64_t n) { return (n + 3) & ~int64_t{3}; }
__host__ __device__ inline size_t StateBytes(int64_t n) { return static_cast<size_t>(8 * PaddedCount(n)) * 4; }

template <class Memory>
__host__ __device__ inline State CarveState(Memory* memory, int64_t n) {
  const int64_t stride = PaddedCount(n);
  float* f = reinterpret_cast<float*>(memory);
  State s;
  s.x1 = f;
  s.y1 = f + stride;
  s.x2 = f + 2 * stride;
  s.y2 = f + 3 * stride;
  s.score = f + 4 * stride;
  s.area = f + 5 * stride;
  s.index = reinterpret_cast<int32_t*>(f + 6 * stride);
  s.holes = reinterpret_cast<int32_t*>(f + 7 * stride);
  return s;
}

__device__ inline uint64_t Larger(uint64_t a, uint64_t b) { return a < b ? b : a; }

__device__ inline uint64_t WarpMax(uint64_t v) {
  for (int d = 16; d > 0; d >>= 1) v = Larger(v, __shfl_xor_sync(kAllLanes, v, d));
  return v;
}

__device__ inline int32_t WarpInclusiveSum(int32_t v, int lane) {
  for (int d = 1; d < 32; d <<= 1) {
    const int32_t other = __shfl_up_sync(kAllLanes, v, d);
    if (lane >= d) v += other;
  }
  return v;
}

// The block's largest key, in every thread: each warp's maximum into warp_keys, a barrier, then
// every warp reduces them (no second barrier: warp_keys is written again only after the next
// step's first barrier, which every warp reaches after reading it).
__device__ inline uint64_t BlockMax(uint64_t key, uint64_t* warp_keys, int lane, int warp) {
  key = WarpMax(key);
  if (lane == 0) warp_keys[warp] = key;
  __syncthreads();
  return WarpMax(lane < kWarps ? warp_keys[lane] : 0);
}

// kInShared: the state lives in dynamic shared memory (StateBytes(n) bytes) and `state` is unused; a
// template parameter, so that the compiler sees shared-memory pointers and issues shared loads and
// stores, not generic ones. __maxnreg__(64) instead of __launch_bounds__(kSoftNmsThreads): under the
// bound alone, ptxas (CUDA 13) kept the shared-state kernel at 40 registers and spilled 12 bytes in
// the pick loop on sm_90; at most 64 it takes 47-62 and spills nothing on sm_75 to sm_90. One block
// runs a call, so its registers cost no occupancy.
template <bool kInShared>
__global__ void __maxnreg__(64)
    SoftNmsKernel(SoftNmsParams p, const float* __restrict__ boxes, const float* __restrict__ scores, int32_t n,
                  State state, float* __restrict__ dets, int64_t* __restrict__ inds, int64_t* __restrict__ kept) {
  extern __shared__ float4 dynamic_shared[];
  __shared__ int32_t warp_drops[kWarps];
  __shared__ uint64_t warp_keys[kWarps];
  const State s = kInShared ? CarveState(dynamic_shared, n) : state;
  const int32_t t = static_cast<int32_t>(threadIdx.x);
  const int lane = t & 31, warp = t >> 5;
  const float offset = static_cast<float>(p.offset);

  for (int32_t k = t; k < n; k += kSoftNmsThreads) s.Load(k, boxes, scores, offset);
  __syncthreads();
  uint64_t key = 0;
  for (int32_t k = t; k < n; k += kSoftNmsThreads) key = Larger(key, shared::SoftNmsPickKey(s.score[k], k, 0));
  int32_t best = static_cast<int32_t>(shared::SoftNmsPickPosition(BlockMax(key, warp_keys, lane, warp)));

  int32_t end = n;
  int32_t i = 0;
  for (; i < end; ++i) {
    // 1. The pick, emitted, and the decay of this thread's run of (i, end).
    const float bx1 = s.x1[best], by1 = s.y1[best], bx2 = s.x2[best], by2 = s.y2[best], barea = s.area[best];
    if (t == 0) {
      dets[5 * static_cast<int64_t>(i)] = bx1;
      dets[5 * static_cast<int64_t>(i) + 1] = by1;
      dets[5 * static_cast<int64_t>(i) + 2] = bx2;
      dets[5 * static_cast<int64_t>(i) + 3] = by2;
      dets[5 * static_cast<int64_t>(i) + 4] = s.score[best];
      inds[i] = s.index[best];
    }
    int32_t first, last;
    shared::SoftNmsThreadRange(i + 1, end, t, kSoftNmsThreads, &first, &last);
    int32_t drops = 0;
    float moved_score = 0.0f;  // the decayed score of the box from position i, now at best
    for (int32_t k = first; k < last; ++k) {
      const int32_t from = k == best ? i : k;
      const float iou = shared::SoftNmsIou(bx1, by1, bx2, by2, barea, s.x1[from], s.y1[from], s.x2[from], s.y2[from],
                                           s.area[from], offset);
      const float decayed = shared::SoftNmsDecay(p, s.score[from], iou);
      if (k == best) {
        moved_score = decayed;
      } else {
        s.score[k] = decayed;
      }
      drops += decayed < p.min_score ? 1 : 0;
    }
    // 2. The drops ahead of this thread's run, and how many there are in all.
    const int32_t inclusive = WarpInclusiveSum(drops, lane);
    if (lane == 31) warp_drops[warp] = inclusive;
    __syncthreads();
    const int32_t warp_total = lane < kWarps ? warp_drops[lane] : 0;
    const int32_t warps_inclusive = WarpInclusiveSum(warp_total, lane);
    const int32_t all_drops = __shfl_sync(kAllLanes, warps_inclusive, 31);
    int32_t before = __shfl_sync(kAllLanes, warps_inclusive - warp_total, warp) + inclusive - drops;
    if (best != i && first <= best && best < last) {  // every thread has read best
      s.Move(best, i);
      s.score[best] = moved_score;
    }
    const int32_t region_end = end - all_drops;
    // The positions that stay: survivors keep them, holes are recorded by rank. Then, after a
    // barrier, the survivors beyond move into the holes.
    key = 0;
    const int32_t stay_last = last < region_end ? last : region_end;
    for (int32_t k = first; k < stay_last; ++k) {
      const float score = s.score[k];
      if (score < p.min_score) {
        s.holes[before++] = k;
      } else {
        key = Larger(key, shared::SoftNmsPickKey(score, k, i + 1));
      }
    }
    if (all_drops > 0) {
      __syncthreads();
      for (int32_t k = first > region_end ? first : region_end; k < last; ++k) {
        const float score = s.score[k];
        if (score < p.min_score) {
          ++before;
          continue;
        }
        const int32_t to = s.holes[shared::SoftNmsMoverRank(k, end, all_drops, before)];
        s.Move(to, k);
        key = Larger(key, shared::SoftNmsPickKey(score, to, i + 1));
      }
    }
    // 3. The next pick.
    best = static_cast<int32_t>(shared::SoftNmsPickPosition(BlockMax(key, warp_keys, lane, warp)));
    end = region_end;
  }
  if (t == 0) *kept = i;
}

// The dynamic shared memory the kernel's state may take on the current device (its opt-in limit
// less the kernel's static shared memory), with the kernel's limit raised to it. Asked of the driver
// once per device: always the device's whole limit, never a call's size, since the attribute is the
// kernel's on the device and concurrent calls must not lower it under each other.
Status SharedStateLimit(int64_t* limit) {
  constexpr int kCached = 64;
  static OncePerDevice raised;
  static int64_t limits[kCached];
  DeviceFigures figures;
  OPBRIDGE_RETURN_IF_ERROR(CurrentDeviceFigures(&figures));
  int64_t found = 0;
  OPBRIDGE_RETURN_IF_ERROR(raised.Run(figures.device, [&] {
    cudaFuncAttributes attributes;
    OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaFuncGetAttributes(&attributes, SoftNmsKernel<true>), "the soft-NMS kernel"));
    found = static_cast<int64_t>(figures.shared_optin) - static_cast<int64_t>(attributes.sharedSizeBytes);
    OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaFuncSetAttribute(SoftNmsKernel<true>,
                                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                            static_cast<int>(found)),
                                       "the soft-NMS kernel's shared memory"));
    if (figures.device < kCached) limits[figures.device] = found;
    return Status::Ok();
  }));
  *limit = figures.device >= 0 && figures.device < kCached ? limits[figures.device] : found;
  return Status::Ok();
}

}  // namespace

Status SoftNms(const SoftNmsParams& params, const float* boxes, const float* scores, int64_t n,
               const AllocateSoftNmsOutputs& allocate, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  float* dets = nullptr;
  int64_t* inds = nullptr;
  if (n == 0) return allocate(0, &dets, &inds);
  if (n > kSoftNmsMaxBoxes) {
    return Status::Error("on the GPU soft-NMS takes at most ", kSoftNmsMaxBoxes, " boxes (32-bit positions), got ", n);
  }
  int64_t shared_limit = 0;
  OPBRIDGE_RETURN_IF_ERROR(SharedStateLimit(&shared_limit));
  const size_t state_bytes = StateBytes(n);
  const bool in_shared = static_cast<int64_t>(state_bytes) <= shared_limit;

  const size_t bytes = ArenaBytes<float>(5 * n) + ArenaBytes<int64_t>(n) + ArenaBytes<int64_t>(1) +
                       (in_shared ? 0 : ArenaBytes<char>(static_cast<int64_t>(state_bytes)));
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  float* all_dets = arena.Take<float>(5 * n);
  int64_t* all_inds = arena.Take<int64_t>(n);
  int64_t* kept = arena.Take<int64_t>(1);
  State state = {};
  if (!in_shared) state = CarveState(arena.Take<char>(static_cast<int64_t>(state_bytes)), n);
  if (in_shared) {
    SoftNmsKernel<true><<<1, kSoftNmsThreads, state_bytes, stream>>>(params, boxes, scores, static_cast<int32_t>(n),
                                                                     state, all_dets, all_inds, kept);
  } else {
    SoftNmsKernel<false><<<1, kSoftNmsThreads, 0, stream>>>(params, boxes, scores, static_cast<int32_t>(n), state,
                                                             all_dets, all_inds, kept);
  }
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the soft-NMS kernel", stream));
  int64_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyCountToHost(kept, &count, "copying the soft-NMS output count to the host", stream));
  OPBRIDGE_RETURN_IF_ERROR(allocate(count, &dets, &inds));
  if (count == 0) return Status::Ok();
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemcpyAsync(dets, all_dets, sizeof(float) * 5 * static_cast<size_t>(count),
                                                     cudaMemcpyDeviceToDevice, stream),
                                     "copying the soft-NMS boxes"));
  return CudaError(cudaMemcpyAsync(inds, all_inds, sizeof(int64_t) * static_cast<size_t>(count),
                                   cudaMemcpyDeviceToDevice, stream),
                   "copying the soft-NMS indices");
}

}  // namespace opbridge::cuda
