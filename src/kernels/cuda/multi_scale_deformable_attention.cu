// Multi-scale deformable attention CUDA kernel: one thread per output element (image, query, head,
// channel), channels innermost, so that a warp's 32 threads (D = 32, the usual) read one corner's 32
// contiguous channels at once (128 bytes) and share its taps. Each thread walks its head's levels and
// points in order, makes each point's taps (shared::MakeMsdaPointTaps: the same for every channel,
// computed by each thread from broadcast reads) and adds a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3
// (shared::MsdaPointTerm), as the CPU kernel does per channel: the same bits. The levels' sizes ride
// in the launch's parameters, kMsdaLevelsPerLaunch at a time; a model with more levels takes more
// launches, each adding its levels to the output in order (the same sums).
//
// Expected time on an H100 (workloads.md): msda.encoder ([1, ~20,000 queries, 8 heads, 32 channels],
// 4 levels x 4 points): 5.4 M threads, each 16 points x (4 gathers of 4 bytes, coalesced across the
// warp, ~40 instructions of taps): the value tensor (21 MB) stays in L2 (50 MB), so the gathers are
// L2 hits; about 5.4 M x 16 x 60 instructions / (132 SMs x 128 lanes x 1.98 GHz) = 0.15 ms, against
// mmcv's PyTorch formulation's 3.08 ms on an H200. msda.decoder (900 queries): 0.23 M threads, under
// 20 us. The longest chain is a thread's 16 points, each a dependent load and add.
#include "kernels/cuda/multi_scale_deformable_attention.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/msda_taps.h"

namespace opbridge::cuda {
namespace {

constexpr int kMsdaLevelsPerLaunch = 16;

// Levels [first, first + count) of a call: sizes and first value rows.
struct MsdaLevels {
  int64_t height[kMsdaLevelsPerLaunch], width[kMsdaLevelsPerLaunch], start[kMsdaLevelsPerLaunch];
  int32_t first, count;
};

template <class Index>
__global__ void MsdaKernel(const float* value, Index values, Index heads, Index channels, Index levels, Index points,
                           const __grid_constant__ MsdaLevels launch, const float* locations,
                           const float* weights, Index count, Index queries_heads, float* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    const Index c = index % channels, head_query = index / channels;  // (n * Lq + q) * M + m
    const Index m = head_query % heads, n = head_query / queries_heads;
    const Index row_stride = heads * channels;
    const Index first_point = head_query * levels * points + launch.first * points;
    const float* location = locations + 2 * first_point;
    const float* attention = weights + first_point;
    float out = launch.first == 0 ? 0.0f : output[index];
    for (int l = 0; l < launch.count; ++l) {
      const int64_t height = launch.height[l], width = launch.width[l];
      const shared::GridTapBounds bounds(height, width);
      const float* rows = value + ((n * values + static_cast<Index>(launch.start[l])) * heads + m) * channels + c;
      for (Index p = 0; p < points; ++p, location += 2, ++attention) {
        const shared::MsdaPointTaps t = shared::MakeMsdaPointTaps(location, *attention, height, width, bounds);
        float v[4];
        for (int k = 0; k < 4; ++k) {
          v[k] = 0.0f;  // a corner outside the map reads 0
          if (t.inside[k]) {
            const Index pixel = (static_cast<Index>(t.y0) + (k >> 1)) * static_cast<Index>(width) + t.x0 + (k & 1);
            v[k] = rows[pixel * row_stride];
          }
        }
        out += shared::MsdaPointTerm(t, v[0], v[1], v[2], v[3]);
      }
    }
    output[index] = out;
  }
}

template <class Index>
Status Launch(const MsdaDims& d, const float* value, const MsdaLevels& levels, const float* locations,
              const float* weights, float* output, Stream stream) {
  const int64_t count = d.batch * d.queries * d.heads * d.channels;
  MsdaKernel<Index><<<BlocksFor(count), kThreads, 0, stream>>>(
      value, static_cast<Index>(d.values), static_cast<Index>(d.heads), static_cast<Index>(d.channels),
      static_cast<Index>(d.levels), static_cast<Index>(d.points), levels, locations, weights, static_cast<Index>(count),
      static_cast<Index>(d.queries * d.heads), output);
  return LaunchStatus("the multi-scale deformable attention kernel", stream);
}

}  // namespace

Status MultiScaleDeformableAttention(const MsdaDims& dims, const float* value, const int64_t* spatial_shapes,
                                     const int64_t* level_start_index, const float* sampling_locations,
                                     const float* attention_weights, float* output, Stream stream) {
  ClearStaleError();
  const int64_t count = dims.batch * dims.queries * dims.heads * dims.channels;
  if (count == 0) return Status::Ok();
  // 32-bit indices where every tensor's element count allows (the value rows' offsets, the points').
  const bool fits = FitsInt32(count) && FitsInt32(dims.batch * dims.values * dims.heads * dims.channels) &&
                    FitsInt32(2 * dims.batch * dims.queries * dims.heads * dims.levels * dims.points);
  for (int64_t first = 0; first < dims.levels; first += kMsdaLevelsPerLaunch) {  // L >= 1 (CheckMsdaShapes)
    MsdaLevels levels{};
    levels.first = static_cast<int32_t>(first);
    levels.count = static_cast<int32_t>(dims.levels - first < kMsdaLevelsPerLaunch ? dims.levels - first
                                                                                  : kMsdaLevelsPerLaunch);
    for (int32_t l = 0; l < levels.count; ++l) {
      levels.height[l] = spatial_shapes[2 * (first + l)];
      levels.width[l] = spatial_shapes[2 * (first + l) + 1];
      levels.start[l] = level_start_index[first + l];
    }
    OPBRIDGE_RETURN_IF_ERROR(fits ? Launch<int32_t>(dims, value, levels, sampling_locations, attention_weights, output,
                                                    stream)
                                  : Launch<int64_t>(dims, value, levels, sampling_locations, attention_weights, output,
                                                    stream));
  }
  return Status::Ok();
}

}  // namespace opbridge::cuda
