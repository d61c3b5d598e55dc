// Bicubic interpolation CPU kernel (taps and sums: kernels/shared/bicubic_taps.h, shared with the
// CUDA kernel). The 2-D interpolation is separable and PyTorch sums the width taps inside the height
// taps, so a horizontal pass over the input rows a task needs
// (4 taps per output column, into scratch) followed by a vertical pass over whole output rows
// (4 rows combined, vectorised over the contiguous columns) computes exactly PyTorch's sums.
// Tasks are (plane, block of output rows); each output is written by one task.
#include "kernels/cpu/bicubic_interpolate.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "kernels/shared/bicubic_taps.h"

namespace opbridge::cpu {
namespace {

// Output floats per task: enough to amortise the task's horizontal rows and start-up.
constexpr int64_t kTaskOutputFloats = 65536;

// One axis' taps: for output o, input indices index[4 * o + j] (clamped to the axis) and weights
// (shared::MakeCubicTaps, what the CUDA kernel computes per element).
struct AxisTaps {
  std::vector<int64_t> index;
  std::vector<float> weight;
};

AxisTaps MakeTaps(int64_t in, int64_t out, float scale_factor, bool align_corners) {
  const float scale = shared::CubicAxisScale(in, out, scale_factor, align_corners);
  AxisTaps taps{std::vector<int64_t>(4 * out), std::vector<float>(4 * out)};
  for (int64_t o = 0; o < out; ++o) {
    const shared::CubicTaps<int64_t> t = shared::MakeCubicTaps<int64_t>(o, in, scale, align_corners);
    for (int64_t j = 0; j < 4; ++j) {
      taps.index[4 * o + j] = t.index[j];
      taps.weight[4 * o + j] = t.weight[j];
    }
  }
  return taps;
}

}  // namespace

Status BicubicInterpolate(const float* input, const Shape& input_shape, const BicubicInterpolateParams& params,
                          const Shape& output_shape, float* output, ScratchAllocator& scratch,
                          const TaskRunner& runner) {
  const int64_t planes = input_shape[0] * input_shape[1];
  const int64_t in_h = input_shape[2], in_w = input_shape[3];
  const int64_t out_h = output_shape[2], out_w = output_shape[3];
  if (planes == 0) return Status::Ok();
  const AxisTaps ty = MakeTaps(in_h, out_h, params.scale_h, params.align_corners);
  const AxisTaps tx = MakeTaps(in_w, out_w, params.scale_w, params.align_corners);
  const int64_t block = std::min(out_h, std::max<int64_t>(1, kTaskOutputFloats / out_w));
  const int64_t blocks = (out_h + block - 1) / block;
  std::atomic<bool> out_of_memory{false};
  Status status = ParallelFor(runner, static_cast<size_t>(planes * blocks), [&](size_t task) {
    const int64_t plane = static_cast<int64_t>(task) / blocks;
    const int64_t y0 = (static_cast<int64_t>(task) % blocks) * block, y1 = std::min(out_h, y0 + block);
    // The input rows this block's taps read (the taps are nondecreasing in the output row).
    const int64_t row0 = ty.index[4 * y0], row1 = ty.index[4 * (y1 - 1) + 3];
    ScratchBlock memory(scratch, sizeof(float) * static_cast<size_t>((row1 - row0 + 1) * out_w));
    auto* rows = static_cast<float*>(memory.data());
    if (rows == nullptr) {
      out_of_memory.store(true);
      return;
    }
    const float* src = input + plane * in_h * in_w;
    // Horizontal pass: (x0 * w0 + x1 * w1) + x2 * w2) + x3 * w3 per output column.
    for (int64_t r = row0; r <= row1; ++r) {
      const float* line = src + r * in_w;
      float* h = rows + (r - row0) * out_w;
      for (int64_t o = 0; o < out_w; ++o) {
        const int64_t* i = &tx.index[4 * o];
        const float* w = &tx.weight[4 * o];
        h[o] = shared::CubicSum(line[i[0]], line[i[1]], line[i[2]], line[i[3]], w);
      }
    }
    // Vertical pass: whole rows, contiguous.
    float* dst = output + plane * out_h * out_w;
    for (int64_t y = y0; y < y1; ++y) {
      const int64_t* i = &ty.index[4 * y];
      const float* w = &ty.weight[4 * y];
      const float* h0 = rows + (i[0] - row0) * out_w;
      const float* h1 = rows + (i[1] - row0) * out_w;
      const float* h2 = rows + (i[2] - row0) * out_w;
      const float* h3 = rows + (i[3] - row0) * out_w;
      float* line = dst + y * out_w;
      const float wy[4] = {w[0], w[1], w[2], w[3]};  // in registers for the vectorised loop
      for (int64_t o = 0; o < out_w; ++o) line[o] = shared::CubicSum(h0[o], h1[o], h2[o], h3[o], wy);
    }
  });
  OPBRIDGE_RETURN_IF_ERROR(status);
  if (out_of_memory.load()) return Status::Error("could not allocate scratch memory for the horizontal pass");
  return Status::Ok();
}

}  // namespace opbridge::cpu
