// Heatmap decoding CUDA kernel: one block per (roi, keypoint). The block first computes the source
// taps of every row and column of the roi's resized map into shared memory (when the map is at most
// 512 x 512; else each sample computes its own), then its threads take the samples of the resized map
// in turn (shared::ResizedHeatmapSampleAt: no resized map is stored), each keeping a running
// torch.argmax (HeatmapArgmax), and the block merges them in shared memory. The argmax rules order
// the candidates totally, so the merge order does not change the result. One thread writes the
// keypoint.
//
// Expected time, Keypoint R-CNN's 100 rois x 17 keypoints of 56 x 56 maps on an H100: rois of about
// 200 x 200 px give some 70 M samples of 16 reads (from L1: the 12 KB map) and 7 multiply-adds each,
// some 3 G instructions: about 0.1 ms.
#include "kernels/cuda/heatmaps_to_keypoints.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/heatmap_keypoint.h"

namespace opbridge::cuda {
namespace {

constexpr int kBlockThreads = 256;

__global__ void __launch_bounds__(kBlockThreads)
    HeatmapsToKeypointsKernel(const float* maps, int64_t k, int64_t map_h, int64_t map_w, const float* rois,
                              int64_t tasks, float* xy, float* scores) {
  __shared__ shared::HeatmapArgmax partial[kBlockThreads];
  __shared__ shared::CachedCubicTap row_taps[shared::kCachedTapsPerAxis], column_taps[shared::kCachedTapsPerAxis];
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    const float* roi = rois + 4 * (task / k);
    const shared::RoiHeatmap m = shared::MakeRoiHeatmap(roi);  // the same for the whole block
    shared::HeatmapArgmax best = shared::HeatmapArgmax::None();
    if (m.finite && m.within_limit) {
      const float* map = maps + task * map_h * map_w;
      const float scale_h = shared::InterpolateScale(map_h, m.out_h);
      const float scale_w = shared::InterpolateScale(map_w, m.out_w);
      // 32-bit sample indices: a map within the limit has at most 2^26 samples.
      const int32_t samples = static_cast<int32_t>(m.out_h * m.out_w), width = static_cast<int32_t>(m.out_w);
      if (shared::CanCacheTaps(m, map_h, map_w)) {
        for (int32_t y = t; y < m.out_h; y += kBlockThreads) {
          row_taps[y] = shared::CacheTap(shared::CubicSourceTap(scale_h, y, map_h));
        }
        for (int32_t x = t; x < m.out_w; x += kBlockThreads) {
          column_taps[x] = shared::CacheTap(shared::CubicSourceTap(scale_w, x, map_w));
        }
        __syncthreads();
        for (int32_t i = t; i < samples; i += kBlockThreads) {
          const int32_t y = i / width;
          best.Consider(shared::ResizedHeatmapSampleAt(map, map_w, row_taps[y], column_taps[i - y * width]), i);
        }
      } else {
        for (int32_t i = t; i < samples; i += kBlockThreads) {
          best.Consider(shared::ResizedHeatmapSample(map, map_h, map_w, scale_h, scale_w, i / width, i % width), i);
        }
      }
    }
    partial[t] = best;
    __syncthreads();
    for (int stride = kBlockThreads / 2; stride > 0; stride /= 2) {
      if (t < stride) partial[t].Consider(partial[t + stride].value, partial[t + stride].index);
      __syncthreads();
    }
    if (t == 0) shared::WriteKeypoint(roi, m, partial[0], xy + 3 * task, scores + task);
    __syncthreads();  // partial and the taps are read before the next task overwrites them
  }
}

}  // namespace

Status HeatmapsToKeypoints(const float* maps, int64_t r, int64_t k, int64_t map_h, int64_t map_w, const float* rois,
                           float* xy, float* scores, Stream stream) {
  ClearStaleError();
  const int64_t tasks = r * k;
  if (tasks == 0) return Status::Ok();
  const unsigned int blocks = static_cast<unsigned int>(tasks < 65535 ? tasks : 65535);
  HeatmapsToKeypointsKernel<<<blocks, kBlockThreads, 0, stream>>>(maps, k, map_h, map_w, rois, tasks, xy, scores);
  return LaunchStatus("the heatmap decoding kernel", stream);
}

}  // namespace opbridge::cuda
