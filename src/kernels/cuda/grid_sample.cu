// Grid sampler CUDA kernel: one thread per output point, which computes the point's taps once and
// its value in every channel (GridSamplePoint of kernels/shared/grid_sample_taps.h, what the CPU
// tests run too), as ATen's CUDA kernel is organised. Consecutive threads take consecutive points,
// so each channel's writes are coalesced.
#include "kernels/cuda/grid_sample.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/grid_sample_3d.h"
#include "kernels/shared/grid_sample_taps.h"

namespace opbridge::cuda {
namespace {

__global__ void GridSampleKernel(shared::GridGeometry g, const float* input, int64_t channels, const float* grid,
                                 int64_t out_plane, int64_t points, float* output) {
  OPBRIDGE_CUDA_FOR(int64_t, index, points) { shared::GridSamplePoint(g, input, channels, grid, out_plane, index, output); }
}

__global__ void GridSample3dKernel(shared::GridGeometry3d g, const float* input, int64_t channels, const float* grid,
                                   int64_t out_volume, int64_t points, float* output) {
  OPBRIDGE_CUDA_FOR(int64_t, index, points) { shared::GridSamplePoint3d(g, input, channels, grid, out_volume, index, output); }
}

}  // namespace

Status GridSample3d(const GridSampleParams& params, const float* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const float* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    float* output, Stream stream) {
  ClearStaleError();
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputVolume(in_d, in_h, in_w));
  const int64_t points = batch * out_d * out_h * out_w;
  if (points == 0 || channels == 0) return Status::Ok();
  const shared::GridGeometry3d geometry{params, in_d, in_h, in_w};
  GridSample3dKernel<<<BlocksFor(points), kThreads, 0, stream>>>(geometry, input, channels, grid, out_d * out_h * out_w,
                                                                 points, output);
  return LaunchStatus("the volumetric grid sampler kernel", stream);
}

Status GridSample(const GridSampleParams& params, const float* input, int64_t batch, int64_t channels, int64_t in_h,
                  int64_t in_w, const float* grid, int64_t out_h, int64_t out_w, float* output, Stream stream) {
  ClearStaleError();
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputPlane(in_h, in_w));
  const int64_t points = batch * out_h * out_w;
  if (points == 0 || channels == 0) return Status::Ok();
  const shared::GridGeometry geometry(params, in_h, in_w);
  GridSampleKernel<<<BlocksFor(points), kThreads, 0, stream>>>(geometry, input, channels, grid, out_h * out_w, points,
                                                               output);
  return LaunchStatus("the grid sampler kernel", stream);
}

}  // namespace opbridge::cuda
