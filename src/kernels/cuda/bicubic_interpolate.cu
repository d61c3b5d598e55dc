// Bicubic interpolation CUDA kernel: one thread per output element, consecutive threads along an
// output row. Each makes its row's and its column's four taps (shared::MakeCubicTaps: a floor, a
// clamp and two cubic polynomials per axis) and sums its 16 inputs as the CPU kernel does
// (shared::BicubicValue: the four rows' column sums, then the rows), so the same bits. The axis
// scales, which PyTorch rounds from a double division, are computed on the host.
//
// Expected time, the bench's bicubic x2 ([2, 64, 128, 128] -> [2, 64, 256, 256]) on an H100:
// 8.4 M outputs (33.5 MB written, 8.4 MB read: about 14 us of DRAM time at 3 TB/s); per output 16
// loads, mostly L1 hits (a warp's 32 columns read about 20 neighbouring input columns of 4 rows), and
// some 100 instructions: 8.4 M x 100 / (132 SMs x 128 lanes x 1.98 GHz) = 25 us, overlapping the
// traffic. Some 25-35 us, against F.interpolate's 0.066 ms for half this size on an H200 (gpu.md) and
// 2.6 ms for the CPU kernel behind copies. The longest chain is one output's 16 loads and 8 sums.
#include "kernels/cuda/bicubic_interpolate.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/bicubic_taps.h"

namespace opbridge::cuda {
namespace {

template <class Index>
__global__ void BicubicKernel(const float* input, Index in_h, Index in_w, Index out_h, Index out_w, float scale_h,
                              float scale_w, bool align_corners, Index count, float* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    const Index x = index % out_w, row = index / out_w;
    const Index y = row % out_h, plane = row / out_h;
    const shared::CubicTaps<Index> ty = shared::MakeCubicTaps<Index>(y, in_h, scale_h, align_corners);
    const shared::CubicTaps<Index> tx = shared::MakeCubicTaps<Index>(x, in_w, scale_w, align_corners);
    output[index] = shared::BicubicValue<Index>(input + static_cast<int64_t>(plane) * in_h * in_w, in_w, ty, tx);
  }
}

}  // namespace

Status BicubicInterpolate(const float* input, const Shape& input_shape, const BicubicInterpolateParams& params,
                          const Shape& output_shape, float* output, Stream stream) {
  ClearStaleError();
  const int64_t in_h = input_shape[2], in_w = input_shape[3], out_h = output_shape[2], out_w = output_shape[3];
  const int64_t count = input_shape[0] * input_shape[1] * out_h * out_w;
  if (count == 0) return Status::Ok();
  const float scale_h = shared::CubicAxisScale(in_h, out_h, params.scale_h, params.align_corners);
  const float scale_w = shared::CubicAxisScale(in_w, out_w, params.scale_w, params.align_corners);
  if (FitsInt32(count) && FitsInt32(in_h * in_w)) {
    BicubicKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        input, static_cast<int32_t>(in_h), static_cast<int32_t>(in_w), static_cast<int32_t>(out_h),
        static_cast<int32_t>(out_w), scale_h, scale_w, params.align_corners, static_cast<int32_t>(count), output);
  } else {
    BicubicKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(input, in_h, in_w, out_h, out_w, scale_h, scale_w,
                                                                     params.align_corners, count, output);
  }
  return LaunchStatus("the bicubic interpolation kernel", stream);
}

}  // namespace opbridge::cuda
