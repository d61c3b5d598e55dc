// Group normalization CUDA kernel, in three launches with the CPU kernel's arithmetic
// (kernels/shared/group_norm_stats.h): one thread per lane of each 16384-value chunk sums its
// values in float64 (every chunk of every block at once); one thread per block combines its chunks'
// lanes into the mean and 1 / std; one thread per value normalizes it. The statistics are tiny
// (16 bytes per lane) and stay in device scratch; nothing synchronizes the stream.
#include "kernels/cuda/group_norm.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/group_norm_stats.h"

namespace opbridge::cuda {
namespace {

__global__ void LaneMomentsKernel(const float* input, int64_t block_size, int64_t chunks, int64_t count,
                                  shared::Moments* lanes) {
  OPBRIDGE_CUDA_FOR(t, count) { lanes[t] = shared::GroupNormLaneStep(input, block_size, chunks, t); }
}

__global__ void BlockStatsKernel(const float* input, int64_t block_size, int64_t chunks, const shared::Moments* lanes,
                                 float epsilon, int64_t blocks, shared::BlockStats* stats) {
  OPBRIDGE_CUDA_FOR(block, blocks) {
    stats[block] = shared::GroupNormStatsStep(input, block_size, chunks, lanes, epsilon, block);
  }
}

__global__ void NormalizeKernel(const float* input, int64_t channels, int64_t spatial, int64_t block_size,
                                const shared::BlockStats* stats, const float* scale, const float* bias, int64_t count,
                                float* output) {
  OPBRIDGE_CUDA_FOR(index, count) {
    output[index] = shared::GroupNormValueStep(input, channels, spatial, block_size, stats, scale, bias, index);
  }
}

}  // namespace

Status GroupNorm(const float* input, const NormLayout& layout, int64_t num_groups, const float* scale,
                 const float* bias, float epsilon, float* output, ScratchAllocator& device_scratch, Stream stream) {
  if (layout.batch == 0 || layout.channels == 0 || layout.spatial == 0) return Status::Ok();  // no values
  const int64_t block_size = layout.channels / num_groups * layout.spatial;
  const int64_t blocks = layout.batch * num_groups;
  const int64_t chunks = (block_size + shared::kNormChunk - 1) / shared::kNormChunk;
  const int64_t lane_count = blocks * chunks * shared::kNormLanes;
  const size_t bytes = ArenaBytes<shared::Moments>(lane_count) + ArenaBytes<shared::BlockStats>(blocks);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of CUDA scratch memory");
  Arena arena(block.data(), bytes);
  auto* lanes = arena.Take<shared::Moments>(lane_count);
  auto* stats = arena.Take<shared::BlockStats>(blocks);
  LaneMomentsKernel<<<BlocksFor(lane_count), kThreads, 0, stream>>>(input, block_size, chunks, lane_count, lanes);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel"));
  BlockStatsKernel<<<BlocksFor(blocks), kThreads, 0, stream>>>(input, block_size, chunks, lanes, epsilon, blocks, stats);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the group normalization statistics kernel"));
  const int64_t count = layout.batch * layout.channels * layout.spatial;
  NormalizeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(input, layout.channels, layout.spatial, block_size, stats,
                                                             scale, bias, count, output);
  return LaunchStatus("the group normalization kernel");
}

}  // namespace opbridge::cuda
