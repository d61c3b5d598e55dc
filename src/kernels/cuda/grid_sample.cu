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

// T: the storage type of the input, the grid and the output (float, Float16, BFloat16).
template <class T>
__global__ void GridSampleKernel(shared::GridGeometry g, const T* input, int64_t channels, const T* grid,
                                 int64_t out_plane, int64_t points, T* output) {
  OPBRIDGE_CUDA_FOR(int64_t, index, points) { shared::GridSamplePoint(g, input, channels, grid, out_plane, index, output); }
}

template <class T>
__global__ void GridSample3dKernel(shared::GridGeometry3d g, const T* input, int64_t channels, const T* grid,
                                   int64_t out_volume, int64_t points, T* output) {
  OPBRIDGE_CUDA_FOR(int64_t, index, points) { shared::GridSamplePoint3d(g, input, channels, grid, out_volume, index, output); }
}

}  // namespace

template <class T>
Status GridSample3d(const GridSampleParams& params, const T* input, int64_t batch, int64_t channels, int64_t in_d,
                    int64_t in_h, int64_t in_w, const T* grid, int64_t out_d, int64_t out_h, int64_t out_w,
                    T* output, Stream stream) {
  ClearStaleError();
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputVolume(in_d, in_h, in_w));
  const int64_t points = batch * out_d * out_h * out_w;
  if (points == 0 || channels == 0) return Status::Ok();
  const shared::GridGeometry3d geometry{params, in_d, in_h, in_w};
  GridSample3dKernel<T><<<BlocksFor(points), kThreads, 0, stream>>>(geometry, input, channels, grid, out_d * out_h * out_w,
                                                                 points, output);
  return LaunchStatus("the volumetric grid sampler kernel", stream);
}

template <class T>
Status GridSample(const GridSampleParams& params, const T* input, int64_t batch, int64_t channels, int64_t in_h,
                  int64_t in_w, const T* grid, int64_t out_h, int64_t out_w, T* output, Stream stream) {
  ClearStaleError();
  OPBRIDGE_RETURN_IF_ERROR(CheckGridSampleInputPlane(in_h, in_w));
  const int64_t points = batch * out_h * out_w;
  if (points == 0 || channels == 0) return Status::Ok();
  const shared::GridGeometry geometry(params, in_h, in_w);
  GridSampleKernel<T><<<BlocksFor(points), kThreads, 0, stream>>>(geometry, input, channels, grid, out_h * out_w, points,
                                                               output);
  return LaunchStatus("the grid sampler kernel", stream);
}

#define OPBRIDGE_GRID_SAMPLE(T)                                                                                   \
  template Status GridSample<T>(const GridSampleParams&, const T*, int64_t, int64_t, int64_t, int64_t, const T*,      \
                                int64_t, int64_t, T*, Stream);                                                       \
  template Status GridSample3d<T>(const GridSampleParams&, const T*, int64_t, int64_t, int64_t, int64_t, int64_t,     \
                                  const T*, int64_t, int64_t, int64_t, T*, Stream);
OPBRIDGE_GRID_SAMPLE(float)
OPBRIDGE_GRID_SAMPLE(shared::Float16)
OPBRIDGE_GRID_SAMPLE(shared::BFloat16)
#undef OPBRIDGE_GRID_SAMPLE

}  // namespace opbridge::cuda
