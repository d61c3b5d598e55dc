// Grid priors CUDA kernel: one thread per anchor row (GridPriorRow of kernels/shared/grid_priors.h,
// what the CPU tests run too), written as one 16-byte store.
#include "kernels/cuda/grid_priors.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/grid_priors.h"

namespace opbridge::cuda {
namespace {

template <class Index>
__global__ void GridPriorsKernel(const float* base_anchors, Index anchors, Index width, float stride_w,
                                 float stride_h, Index rows, float4* output) {
  OPBRIDGE_CUDA_FOR(Index, row, rows) {
    float anchor[4];
    shared::GridPriorRow(base_anchors, anchors, width, stride_w, stride_h, row, anchor);
    output[row] = make_float4(anchor[0], anchor[1], anchor[2], anchor[3]);
  }
}

}  // namespace

Status GridPriors(const float* base_anchors, int64_t anchors, int64_t height, int64_t width,
                  const GridPriorsParams& params, float* output, Stream stream) {
  ClearStaleError();
  const int64_t rows = height * width * anchors;  // the core's shape check bounds it
  if (rows == 0) return Status::Ok();
  const float stride_w = static_cast<float>(params.stride_w), stride_h = static_cast<float>(params.stride_h);
  // ORT's device allocations are 256-byte aligned: each row's 16 bytes are one float4.
  auto* rows_out = reinterpret_cast<float4*>(output);
  if (FitsInt32(rows * 4)) {
    GridPriorsKernel<int32_t><<<BlocksFor(rows), kThreads, 0, stream>>>(
        base_anchors, static_cast<int32_t>(anchors), static_cast<int32_t>(width), stride_w, stride_h,
        static_cast<int32_t>(rows), rows_out);
  } else {
    GridPriorsKernel<int64_t><<<BlocksFor(rows), kThreads, 0, stream>>>(base_anchors, anchors, width, stride_w,
                                                                       stride_h, rows, rows_out);
  }
  return LaunchStatus("the grid priors kernel", stream);
}

}  // namespace opbridge::cuda
