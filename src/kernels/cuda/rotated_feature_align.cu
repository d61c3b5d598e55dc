// Rotated feature align CUDA kernel: a thread per (image, run of kChannelRun channels, pixel),
// consecutive threads on consecutive pixels (coalesced reads of each channel's pixel and writes of
// its output). The thread makes its pixel's taps once (shared::PixelTaps: the box centre and, with
// 5 points, its corners, cos and sin in double rounded once), then for each channel of its run adds
// the pixel's value and its samples in the CPU kernel's order: the CPU kernel's bits.
//
// Expected time on an H100 for a mmrotate head's [2, 256, 128, 128] with 5 points: 8.4 M outputs
// of 5 samples (4 loads each, mostly L1 hits: neighbouring pixels sample neighbouring points) over
// 67 MB in and out: some 40-60 us, bound by the samples' loads; the longest chain is one thread's
// 16 channels of 5 samples.
#include "kernels/cuda/rotated_feature_align.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/rotated_feature_align_taps.h"

namespace opbridge::cuda {
namespace {

// Channels a thread aligns with the taps it made once (the taps cost more than a channel's samples).
constexpr int32_t kChannelRun = 16;

template <int kPoints>
__global__ void AlignKernel(RotatedFeatureAlignParams p, const float* features, int32_t channels, int32_t height,
                            int32_t width, const float* boxes, int64_t count, float* output) {
  const int32_t plane = height * width;
  const int32_t runs = (channels + kChannelRun - 1) / kChannelRun;
  OPBRIDGE_CUDA_FOR(int64_t, t, count) {  // t = (n * runs + run) * plane + pixel
    const int32_t pixel = static_cast<int32_t>(t % plane);
    const int64_t nr = t / plane;
    const int32_t run = static_cast<int32_t>(nr % runs);
    const int64_t n = nr / runs;
    shared::BilinearTaps taps[kPoints];
    shared::PixelTaps(p, boxes + (n * plane + pixel) * 5, height, width, taps);
    const int32_t c_end = min(channels, (run + 1) * kChannelRun);
    for (int32_t c = run * kChannelRun; c < c_end; ++c) {
      const int64_t offset = (n * channels + c) * plane;
      const float* in = features + offset;
      float value = in[pixel];
#pragma unroll
      for (int k = 0; k < kPoints; ++k) value += shared::BilinearSample(taps[k], in, width);
      output[offset + pixel] = value;
    }
  }
}

}  // namespace

Status RotatedFeatureAlign(const RotatedFeatureAlignParams& p, const float* features, int64_t batch,
                           int64_t channels, int64_t height, int64_t width, const float* best_rbboxes, float* output,
                           Stream stream) {
  ClearStaleError();
  if (batch == 0 || channels == 0 || height == 0 || width == 0) return Status::Ok();
  // Planes fit 32 bits (CheckRotatedFeatureAlignShapes), and so does the channel count of one.
  if (channels > INT32_MAX - kChannelRun) {
    return Status::Error("on the GPU features must have fewer than 2^31 - 16 channels, got ", channels);
  }
  const int64_t count = batch * ((channels + kChannelRun - 1) / kChannelRun) * height * width;
  if (p.points == 1) {
    AlignKernel<1><<<BlocksFor(count), kThreads, 0, stream>>>(
        p, features, static_cast<int32_t>(channels), static_cast<int32_t>(height), static_cast<int32_t>(width),
        best_rbboxes, count, output);
  } else {
    AlignKernel<5><<<BlocksFor(count), kThreads, 0, stream>>>(
        p, features, static_cast<int32_t>(channels), static_cast<int32_t>(height), static_cast<int32_t>(width),
        best_rbboxes, count, output);
  }
  return LaunchStatus("the rotated feature align kernel", stream);
}

}  // namespace opbridge::cuda
