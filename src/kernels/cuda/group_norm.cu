// Group normalization CUDA kernel, in three launches with the CPU kernel's arithmetic
// (kernels/shared/group_norm_stats.h):
//   1. a warp per 1024-value chunk: each lane sums its 32 values in float64 (the warp reads 128
//      contiguous bytes per step), then the warp combines the lanes by the shared pairwise tree, a
//      level at a time;
//   2. a thread per block (sample, group): its chunks' sums in order, its statistics, and the
//      ChannelNorm (mean, a, b) of each of its channels, once;
//   3. a thread per value: (x - mean) * a + b with its (sample, channel)'s norm, 32-bit indices
//      where the size allows.
// The statistics are small (16 bytes per chunk, 12 per channel) and stay in device scratch; nothing
// synchronizes the stream.
//
// Expected time, norm.group / norm.instance ([8, 64, 128, 128], 33.5 MB) on an H100: step 1 reads the
// input once (8,192 warps, about 12 us at 2.8 TB/s; 34 M float64 operations, 2 us at full-rate FP64),
// step 2 adds 16 or 32 chunks per block (about 1 us), step 3 reads and writes the input (about
// 24 us): some 40 us plus three launches, against PyTorch's 0.09 ms (gpu.md).
#include "kernels/cuda/group_norm.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/group_norm_stats.h"

namespace opbridge::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreads / 32;
static_assert(shared::kNormLanes == 32, "a warp takes a chunk's lanes");

// A warp per chunk: each lane's sums (shared::GroupNormLaneStep), then the lanes' pairwise tree
// (shared::SumLanesStep, the levels of shared::SumLanes) over the warp's shared-memory row.
__global__ void __launch_bounds__(kThreads)
    ChunkMomentsKernel(const float* input, int64_t block_size, int64_t chunks_per_block, int64_t chunks,
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

__global__ void ChannelsKernel(const float* input, int64_t block_size, int64_t chunks_per_block,
                               const shared::Moments* chunk_moments, int64_t groups, int64_t channels_per_group,
                               const float* scale, const float* bias, float epsilon, int64_t blocks,
                               shared::ChannelNorm* norms) {
  OPBRIDGE_CUDA_FOR(int64_t, block, blocks) {
    shared::GroupNormChannelsStep(input, block_size, chunks_per_block, chunk_moments, groups, channels_per_group,
                                  scale, bias, epsilon, block, norms);
  }
}

template <class Index>
__global__ void NormalizeKernel(const float* input, Index spatial, const shared::ChannelNorm* norms, Index count,
                                float* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    output[index] = shared::GroupNormValueStep<Index>(input, spatial, norms, index);
  }
}

}  // namespace

Status GroupNorm(const float* input, const NormLayout& layout, int64_t num_groups, const float* scale,
                 const float* bias, float epsilon, float* output, ScratchAllocator& device_scratch, Stream stream) {
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
  const int64_t chunk_blocks = (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const unsigned int grid = static_cast<unsigned int>(chunk_blocks < (1 << 20) ? chunk_blocks : (1 << 20));
  ChunkMomentsKernel<<<grid, kThreads, 0, stream>>>(input, block_size, chunks_per_block, chunks, chunk_moments);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel", stream));
  ChannelsKernel<<<BlocksFor(blocks), kThreads, 0, stream>>>(input, block_size, chunks_per_block, chunk_moments,
                                                             num_groups, channels_per_group, scale, bias, epsilon,
                                                             blocks, norms);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel", stream));
  const int64_t count = planes * layout.spatial;
  if (FitsInt32(count)) {
    NormalizeKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        input, static_cast<int32_t>(layout.spatial), norms, static_cast<int32_t>(count), output);
  } else {
    NormalizeKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(input, layout.spatial, norms, count, output);
  }
  return LaunchStatus("the group normalization kernel", stream);
}

}  // namespace opbridge::cuda
