// Grid priors CPU kernel (each anchor by kernels/shared/grid_priors.h). Tasks take whole grid rows
// (all W * A anchors of a y), about kChunkFloats output floats each; each output is written by one
// task.
#include "kernels/cpu/grid_priors.h"

#include <algorithm>

#include "kernels/shared/grid_priors.h"

namespace opbridge::cpu {
namespace {

// About 1 MiB of output per task: the op only writes memory, and waking ORT's pool for small
// tasks cost more than it saved at 2 threads (measured on the grid_priors workload).
constexpr int64_t kChunkFloats = 262144;

}  // namespace

Status GridPriors(const float* base_anchors, int64_t anchors, int64_t height, int64_t width,
                  const GridPriorsParams& params, float* output, const TaskRunner& runner) {
  const int64_t row_floats = width * anchors * 4;
  if (row_floats == 0 || height == 0) return Status::Ok();
  const int64_t rows_per_task = std::max<int64_t>(1, kChunkFloats / row_floats);
  const float stride_w = static_cast<float>(params.stride_w), stride_h = static_cast<float>(params.stride_h);
  return ParallelFor(runner, NumChunks(static_cast<size_t>(height), static_cast<size_t>(rows_per_task)),
                     [&](size_t task) {
                       const int64_t first = static_cast<int64_t>(task) * rows_per_task;
                       const int64_t end = std::min(height, first + rows_per_task);
                       for (int64_t y = first; y < end; ++y) {
                         const float sy = shared::GridPriorShift(y, stride_h);
                         float* out = output + y * row_floats;
                         for (int64_t x = 0; x < width; ++x) {
                           const float sx = shared::GridPriorShift(x, stride_w);
                           // One anchor's 4 floats: the compiler keeps (sx, sy, sx, sy) in a vector.
                           for (int64_t a = 0; a < anchors; ++a, out += 4) {
                             shared::GridPriorAnchor(base_anchors + a * 4, sx, sy, out);
                           }
                         }
                       }
                     });
}

}  // namespace opbridge::cpu
