// Multi-scale deformable attention CPU kernel.
//
// The numerics are mmcv's pure-PyTorch formulation: level l's rows of value are a [H_l, W_l] map
// per head, each point samples it as F.grid_sample does (bilinear, zeros padding,
// align_corners=False) at grid = 2 * location - 1, and the output is the sum of the samples
// times their attention weights. The kernel folds each attention weight into the point's four
// bilinear weights, so the sum is over (attn * w_k) * value terms: the same value within float32
// rounding, in another order.
//
// Layout: value is channel-contiguous ([N, S, M, D]: one head's D channels of a pixel are
// adjacent), so each point's four corners are four runs of D floats and the work per point is
// one pass of multiply-adds over D, vectorised. The taps (corner offsets and weights) are
// computed once per point, for all channels. A task takes a block of queries of one image and
// writes their outputs, so results do not depend on the thread count.
#include "kernels/cpu/multi_scale_deformable_attention.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/bilinear_taps.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/shared/msda_taps.h"

namespace opbridge::cpu {
namespace {

// Queries per task: the decoder workload (900 queries x 128 points) still makes 57 tasks, and
// the encoder's (about 20000) 1250, each long enough (2048 points) to dwarf the task overhead.
constexpr int64_t kQueriesPerTask = 16;

struct Job {
  const MsdaDims* dims;
  const float* value;
  const int64_t* spatial_shapes;
  const int64_t* level_start_index;
  const float* locations;
  const float* weights;
  float* output;
  const float* zeros;  // D zeros: the row a corner outside the map reads
  const GridTapBounds* bounds;  // of each level's map
};

// One point's four corners (value rows, or the zero row outside the map) and their weights
// times the point's attention weight.
struct PointTaps {
  const float* corner[4];
  float weight[4];
};

// The taps of every point of query q (M heads x L levels x P points), prefetching their rows.
void QueryTaps(const Job& job, int64_t n, int64_t q, PointTaps* taps) {
  const MsdaDims& d = *job.dims;
  const int64_t channels = d.channels, row_stride = d.heads * d.channels;  // floats from pixel to pixel
  const int64_t head_points = d.levels * d.points;
  for (int64_t m = 0; m < d.heads; ++m) {
    const int64_t head_query = (n * d.queries + q) * d.heads + m;
    const float* location = job.locations + head_query * head_points * 2;
    const float* attention = job.weights + head_query * head_points;
    for (int64_t l = 0; l < d.levels; ++l) {
      const int64_t height = job.spatial_shapes[2 * l], width = job.spatial_shapes[2 * l + 1];
      const float* rows = job.value + ((n * d.values + job.level_start_index[l]) * d.heads + m) * channels;
      const GridTapBounds& bounds = job.bounds[l];
      for (int64_t p = 0; p < d.points; ++p, location += 2, ++attention, ++taps) {
        // The pure formulation samples at grid = 2 * location - 1, unnormalized as grid_sample does
        // with align_corners=False (shared::MakeMsdaPointTaps, what the CUDA kernel runs too).
        const shared::MsdaPointTaps t = shared::MakeMsdaPointTaps(location, *attention, height, width, bounds);
        for (int k = 0; k < 4; ++k) {
          if (!t.inside[k]) {
            taps->corner[k] = job.zeros;
          } else {
            taps->corner[k] = rows + ((t.y0 + (k >> 1)) * width + t.x0 + (k & 1)) * row_stride;
            // The rows are scattered over the value tensor (tens of MB for a detector): asking
            // for them while the other points' taps are computed hides much of their latency.
            __builtin_prefetch(taps->corner[k]);
            __builtin_prefetch(taps->corner[k] + channels - 1);
          }
          taps->weight[k] = t.weight[k];
        }
      }
    }
  }
}

// The outputs of queries [q_begin, q_end) of image n. Compiled for three x86-64 levels and chosen
// at run time (RunAtCpuLevel): the channel loop is where vector width pays.
struct RunQueriesBody {
  static constexpr const char* kName = "MultiScaleDeformableAttention: RunQueries";
  OPBRIDGE_ALWAYS_INLINE static void Run(const Job& job, int64_t n, int64_t q_begin, int64_t q_end, PointTaps* taps);
};

OPBRIDGE_ALWAYS_INLINE void RunQueriesBody::Run(const Job& job, int64_t n, int64_t q_begin, int64_t q_end,
                                                PointTaps* taps) {
  const MsdaDims& d = *job.dims;
  const int64_t channels = d.channels, head_points = d.levels * d.points;
  for (int64_t q = q_begin; q < q_end; ++q) {
    QueryTaps(job, n, q, taps);
    const PointTaps* t = taps;
    for (int64_t m = 0; m < d.heads; ++m) {
      float* __restrict out = job.output + ((n * d.queries + q) * d.heads + m) * channels;
      std::fill(out, out + channels, 0.0f);
      for (int64_t i = 0; i < head_points; ++i, ++t) {
        const float* __restrict v0 = t->corner[0];
        const float* __restrict v1 = t->corner[1];
        const float* __restrict v2 = t->corner[2];
        const float* __restrict v3 = t->corner[3];
        const float a0 = t->weight[0], a1 = t->weight[1], a2 = t->weight[2], a3 = t->weight[3];
        for (int64_t c = 0; c < channels; ++c) out[c] += a0 * v0[c] + a1 * v1[c] + a2 * v2[c] + a3 * v3[c];
      }
    }
  }
}

}  // namespace

Status MultiScaleDeformableAttention(const MsdaDims& dims, const float* value, const int64_t* spatial_shapes,
                                     const int64_t* level_start_index, const float* sampling_locations,
                                     const float* attention_weights, float* output, const TaskRunner& runner) {
  if (dims.batch == 0 || dims.queries == 0 || dims.heads == 0 || dims.channels == 0) return Status::Ok();
  const std::vector<float> zeros(static_cast<size_t>(dims.channels), 0.0f);
  std::vector<GridTapBounds> bounds;
  bounds.reserve(static_cast<size_t>(dims.levels));
  for (int64_t l = 0; l < dims.levels; ++l) bounds.emplace_back(spatial_shapes[2 * l], spatial_shapes[2 * l + 1]);
  const Job job{&dims, value, spatial_shapes, level_start_index, sampling_locations, attention_weights, output,
                zeros.data(), bounds.data()};
  const int64_t blocks = static_cast<int64_t>(NumChunks(static_cast<size_t>(dims.queries), kQueriesPerTask));
  return ParallelFor(runner, static_cast<size_t>(dims.batch * blocks), [&](size_t task) {
    const int64_t n = static_cast<int64_t>(task) / blocks, block = static_cast<int64_t>(task) % blocks;
    const int64_t q_begin = block * kQueriesPerTask;
    std::vector<PointTaps> taps(static_cast<size_t>(dims.heads * dims.levels * dims.points));
    RunAtCpuLevel<4, RunQueriesBody>(job, n, q_begin, std::min(dims.queries, q_begin + kQueriesPerTask), taps.data());
  });
}

}  // namespace opbridge::cpu
