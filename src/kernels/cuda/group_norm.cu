// Group normalization CUDA kernel, in three launches with the CPU kernel's arithmetic
// (kernels/shared/group_norm_stats.h):
//   1. a warp per 1024-value chunk: each lane sums its 32 values in float64 (the warp reads 128
//      contiguous bytes per step), then the warp combines the lanes by the shared pairwise tree, a
//      level at a time;
//   2. a warp per block (sample, group): its chunks' sums in order, its statistics, and the
//      ChannelNorm (mean, a, b) of each of its channels, once;
//   3. a thread per 4 values (or per value where the plane's size is not a multiple of 4):
//      (x - mean) * a + b with its (sample, channel)'s norm, 32-bit indices where the size allows.
// The statistics are small (16 bytes per chunk, 12 per channel) and stay in device scratch; nothing
// synchronizes the stream. Half storage (float16, bfloat16): every value is converted as it is read
// (shared::Load) and each output rounded once as it is stored; the 4-wide pass reads and writes 8
// bytes per thread, half the float32 traffic (norm.group in float16, estimated: ~8 + ~2 + ~13 us).
//
// Time, norm.group / norm.instance ([8, 64, 128, 128], 33.5 MB) on an H100. Estimated: step 1 reads the
// input once (8,192 warps, about 12 us at 2.8 TB/s; 34 M float64 operations, 2 us at full-rate FP64),
// step 2 adds 16 or 32 chunks per block (about 1 us), step 3 reads and writes the input (about
// 24 us): some 40 us plus three launches. Measured (ncu, 2026-11-27, before steps 2 and 3 took their
// present form): 16.4, 12.2 and 35.5 us; PyTorch's three kernels 33.3, 3.6 and 28.2 us. Now expected:
// 16 + ~2 + ~25 us.
#include "kernels/cuda/group_norm.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/group_norm_stats.h"

namespace opbridge::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreads / 32;
static_assert(shared::kNormLanes == 32, "a warp takes a chunk's lanes");

// A warp per chunk: each lane's sums (shared::GroupNormLaneStep), then the lanes' pairwise tree
// (shared::SumLanesStep, the levels of shared::SumLanes) over the warp's shared-memory row.
template <class T>
__global__ void __launch_bounds__(kThreads)
    ChunkMomentsKernel(const T* input, int64_t block_size, int64_t chunks_per_block, int64_t chunks,
                       shared::Moments* chunk_moments) {
  __shared__ double sums[kWarpsPerBlock][shared::kNormLanes], squares[kWarpsPerBlock][shared::kNormLanes];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (int64_t chunk = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; chunk < chunks;
       chunk += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const shared::Moments m = shared::GroupNormLaneStep(input, block_size, chunks_per_block, chunk, lane);
    sums[warp][lane] = m.sum;
    squares[warp][lane] = m.sum_sq;
    for (int stride = 1; stride < shared::kNormLanes; stride *= 2) {
      __syncwarp();
      shared::SumLanesStep(sums[warp], lane, stride);
      shared::SumLanesStep(squares[warp], lane, stride);
    }
    __syncwarp();
    if (lane == 0) chunk_moments[chunk] = {sums[warp][0], squares[warp][0]};
    __syncwarp();  // lane 0 has read the row before the next chunk overwrites it
  }
}

// A warp per block (sample, group): the lanes read 32 chunks' moments at once into the warp's shared
// row, the first lane adds them in chunk order; then the block's statistics, and the lanes write its
// channels' norms (shared::GroupNormBlockStats and GroupNormChannelStep). A thread per block read its
// chunks one dependent load after another: 12 us on an H100 for norm.group's 256 blocks of 32 chunks.
template <class T>
__global__ void __launch_bounds__(kThreads)
    ChannelsKernel(const T* input, int64_t block_size, int64_t chunks_per_block,
                   const shared::Moments* chunk_moments, int64_t groups, int64_t channels_per_group,
                   const T* scale, const T* bias, float epsilon, int64_t blocks, shared::ChannelNorm* norms) {
  __shared__ double staged_sum[kWarpsPerBlock][32], staged_sum_sq[kWarpsPerBlock][32];
  __shared__ shared::BlockStats stats[kWarpsPerBlock];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  for (int64_t block = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; block < blocks;
       block += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const shared::Moments* moments = chunk_moments + block * chunks_per_block;
    shared::Moments total;
    for (int64_t first = 0; first < chunks_per_block; first += 32) {
      const int64_t n = chunks_per_block - first < 32 ? chunks_per_block - first : 32;
      if (lane < n) {
        const shared::Moments m = moments[first + lane];
        staged_sum[warp][lane] = m.sum;
        staged_sum_sq[warp][lane] = m.sum_sq;
      }
      __syncwarp();
      if (lane == 0) {
        for (int64_t k = 0; k < n; ++k) shared::AddChunk({staged_sum[warp][k], staged_sum_sq[warp][k]}, &total);
      }
      __syncwarp();  // the row is read before the next 32 overwrite it
    }
    if (lane == 0) stats[warp] = shared::GroupNormBlockStats(total, input, block_size, epsilon, block);
    __syncwarp();
    for (int64_t k = lane; k < channels_per_group; k += 32) {
      shared::GroupNormChannelStep(stats[warp], groups, channels_per_group, scale, bias, block, k, norms);
    }
    __syncwarp();  // the lanes have read stats[warp] before the next block's first lane writes it
  }
}

template <class Index, class T>
__global__ void NormalizeKernel(const T* input, Index spatial, const shared::ChannelNorm* norms, Index count,
                                T* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    shared::Store(output + index, shared::GroupNormValueStep<Index>(input, spatial, norms, index));
  }
}

// Four consecutive values as one aligned access: 16 bytes of float32, 8 of a half type.
template <class T>
struct alignas(4 * sizeof(T)) Four {
  T v[4];
};

// The same, 4 values of one (sample, channel) a thread where spatial is a multiple of 4: 16-byte
// loads and stores (ORT's buffers are 256-byte aligned). With 4-byte accesses the pass moved 67 MB in
// 35 us on an H100, 1.9 TB/s of its ~3.
template <class Index, class T>
__global__ void NormalizeKernel4(const Four<T>* input, Index spatial4, const shared::ChannelNorm* norms, Index count4,
                                 Four<T>* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count4) {
    const Four<T> x = input[index];
    const shared::ChannelNorm n = norms[index / spatial4];
    Four<T> y;
    for (int i = 0; i < 4; ++i) shared::Store(y.v + i, shared::NormalizeValue(shared::Load(x.v + i), n));
    output[index] = y;
  }
}

}  // namespace

template <class T>
Status GroupNorm(const T* input, const NormLayout& layout, int64_t num_groups, const T* scale, const T* bias,
                 float epsilon, T* output, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  if (layout.batch == 0 || layout.channels == 0 || layout.spatial == 0) return Status::Ok();  // no values
  const int64_t channels_per_group = layout.channels / num_groups;
  const int64_t block_size = channels_per_group * layout.spatial;
  const int64_t blocks = layout.batch * num_groups;
  const int64_t chunks_per_block = (block_size + shared::kNormChunk - 1) / shared::kNormChunk;
  const int64_t chunks = blocks * chunks_per_block, planes = layout.batch * layout.channels;
  const size_t bytes = ArenaBytes<shared::Moments>(chunks) + ArenaBytes<shared::ChannelNorm>(planes);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  auto* chunk_moments = arena.Take<shared::Moments>(chunks);
  auto* norms = arena.Take<shared::ChannelNorm>(planes);
  ChunkMomentsKernel<T><<<BlocksFor(chunks * 32), kThreads, 0, stream>>>(  // a warp per chunk
      input, block_size, chunks_per_block, chunks, chunk_moments);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel", stream));
  ChannelsKernel<T><<<BlocksFor(blocks * 32), kThreads, 0, stream>>>(  // a warp per block
      input, block_size, chunks_per_block, chunk_moments, num_groups, channels_per_group, scale, bias, epsilon, blocks,
      norms);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel", stream));
  const int64_t count = planes * layout.spatial;
  constexpr uintptr_t kFourBytes = sizeof(Four<T>);
  const bool aligned = reinterpret_cast<uintptr_t>(input) % kFourBytes == 0 &&
                       reinterpret_cast<uintptr_t>(output) % kFourBytes == 0;
  if (layout.spatial % 4 == 0 && aligned && FitsInt32(count)) {
    NormalizeKernel4<int32_t, T><<<BlocksFor(count / 4), kThreads, 0, stream>>>(
        reinterpret_cast<const Four<T>*>(input), static_cast<int32_t>(layout.spatial / 4), norms,
        static_cast<int32_t>(count / 4), reinterpret_cast<Four<T>*>(output));
  } else if (FitsInt32(count)) {
    NormalizeKernel<int32_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(
        input, static_cast<int32_t>(layout.spatial), norms, static_cast<int32_t>(count), output);
  } else {
    NormalizeKernel<int64_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(input, layout.spatial, norms, count, output);
  }
  return LaunchStatus("the group normalization kernel", stream);
}

#define OPBRIDGE_GROUP_NORM(T)                                                                     \
  template Status GroupNorm<T>(const T*, const NormLayout&, int64_t, const T*, const T*, float, T*, \
                               ScratchAllocator&, Stream);
OPBRIDGE_GROUP_NORM(float)
OPBRIDGE_GROUP_NORM(shared::Float16)
OPBRIDGE_GROUP_NORM(shared::BFloat16)
#undef OPBRIDGE_GROUP_NORM

}  // namespace opbridge::cuda
