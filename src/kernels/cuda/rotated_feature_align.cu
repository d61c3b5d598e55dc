// Rotated feature align CUDA kernel: a block per tile of 32 pixels of one image and a slice of its
// channels. The block's first warp makes each pixel's taps once (shared::PixelTaps: the box centre
// and, with 5 points, its corners, cos and sin in double rounded once) into shared memory; then its 8
// warps take the slice's channels in turn, a lane per pixel (coalesced reads of each channel's 32
// pixels and writes of their outputs), and add the pixel's value and its samples in the CPU kernel's
// order: the CPU kernel's bits. The taps are made once per pixel and slice, not per 16 channels, and
// the index math is 32-bit with one division per tile, not four 64-bit ones per thread.
//
// Expected time on an H100 for a mmrotate head's [2, 256, 128, 128] with 5 points: 1,024 tiles of
// one slice, 8.4 M outputs of 5 samples (4 loads each, mostly L1 hits: neighbouring pixels sample
// neighbouring points) over 67 MB in and out: some 30-45 us, bound by the samples' loads (before:
// 40-60 us, 16 x the taps' double cos and sin per pixel and 64-bit divisions per thread). ptxas:
// 80 registers with 5 points on sm_75 and sm_90 (the taps held across the channel loop; before 92-95),
// no spills, so 3 blocks of 256 threads per SM (2.6 waves of 396 on 132 SMs), each lane with 21
// independent loads a channel: some 60 KB in flight per SM, where DRAM's rate needs ~14 KB. Capping
// the registers at 64 (4 blocks) spills 28-60 bytes. The longest chain is a lane's 32 channels of 5
// samples after its tile's taps.
#include "kernels/cuda/rotated_feature_align.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/rotated_feature_align_taps.h"

namespace opbridge::cuda {
namespace {

constexpr int kTilePixels = 32;                      // a warp's lanes
constexpr int kChannelWarps = kThreads / kTilePixels;  // warps taking a slice's channels in turn
// Blocks that keep every SM of an H100 busy (8 of 256 threads each on 132 SMs): a call of fewer
// tiles splits its channels into slices (each slice makes its tiles' taps again) until it has these.
constexpr int64_t kTargetBlocks = 1024;

// tiles: of all images (image = tile / image_tiles); channels [slice * slice_channels, ...) of
// blockIdx.y's slice.
template <int kPoints, class Index, class T>
__global__ void __launch_bounds__(kThreads) AlignKernel(RotatedFeatureAlignParams p, const T* features,
                                                         int32_t channels, int32_t height, int32_t width,
                                                         const T* boxes, Index tiles, Index image_tiles,
                                                         int32_t slice_channels, T* output) {
  __shared__ shared::BilinearTaps taps[kPoints][kTilePixels];
  const int32_t plane = height * width;
  const int lane = threadIdx.x % kTilePixels, warp = threadIdx.x / kTilePixels;
  const int32_t c_begin = static_cast<int32_t>(blockIdx.y) * slice_channels;
  const int32_t c_end = channels - c_begin < slice_channels ? channels : c_begin + slice_channels;
  for (Index tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Index n = tile / image_tiles;
    const int32_t pixel = static_cast<int32_t>(tile - n * image_tiles) * kTilePixels + lane;
    const bool inside = pixel < plane;
    if (warp == 0 && inside) {
      shared::BilinearTaps mine[kPoints];
      shared::PixelTaps(p, boxes + (static_cast<int64_t>(n) * plane + pixel) * 5, height, width, mine);
#pragma unroll
      for (int k = 0; k < kPoints; ++k) taps[k][lane] = mine[k];
    }
    __syncthreads();
    if (inside) {
      const int64_t step = static_cast<int64_t>(kChannelWarps) * plane;
      int64_t offset = (static_cast<int64_t>(n) * channels + c_begin + warp) * plane;
      for (int32_t c = c_begin + warp; c < c_end; c += kChannelWarps, offset += step) {
        const T* in = features + offset;
        float value = shared::Load(in + pixel);
#pragma unroll
        for (int k = 0; k < kPoints; ++k) value += shared::BilinearSample(taps[k][lane], in, width);
        shared::Store(output + offset + pixel, value);
      }
    }
    __syncthreads();  // the next tile's taps overwrite these
  }
}

template <int kPoints, class Index, class T>
void Launch(const RotatedFeatureAlignParams& p, const T* features, int32_t channels, int32_t height,
            int32_t width, const T* boxes, int64_t tiles, int64_t image_tiles, int32_t slices,
            int32_t slice_channels, T* output, Stream stream) {
  const int64_t grid_x = tiles < (int64_t{1} << 20) ? tiles : (int64_t{1} << 20);
  const dim3 grid(static_cast<unsigned int>(grid_x), static_cast<unsigned int>(slices));
  AlignKernel<kPoints, Index, T><<<grid, kThreads, 0, stream>>>(p, features, channels, height, width, boxes,
                                                             static_cast<Index>(tiles),
                                                             static_cast<Index>(image_tiles), slice_channels, output);
}

}  // namespace

template <class T>
Status RotatedFeatureAlign(const RotatedFeatureAlignParams& p, const T* features, int64_t batch, int64_t channels,
                           int64_t height, int64_t width, const T* best_rbboxes, T* output, Stream stream) {
  ClearStaleError();
  if (batch == 0 || channels == 0 || height == 0 || width == 0) return Status::Ok();
  // Planes fit 32 bits (CheckRotatedFeatureAlignShapes), and so must the channel count of one image.
  if (channels > INT32_MAX - kThreads) {
    return Status::Error("on the GPU features must have fewer than 2^31 - 256 channels, got ", channels);
  }
  const int64_t image_tiles = (height * width + kTilePixels - 1) / kTilePixels;
  const int64_t tiles = batch * image_tiles;
  // Slices of whole warps' turns (a multiple of 8 channels), as few as fill kTargetBlocks.
  const int64_t turns = (channels + kChannelWarps - 1) / kChannelWarps;
  int64_t slices = tiles >= kTargetBlocks ? 1 : (kTargetBlocks + tiles - 1) / tiles;
  if (slices > turns) slices = turns;
  const int64_t slice_channels = (turns + slices - 1) / slices * kChannelWarps;
  slices = (channels + slice_channels - 1) / slice_channels;  // at most kTargetBlocks: a grid's y
  const auto c = static_cast<int32_t>(channels), h = static_cast<int32_t>(height), w = static_cast<int32_t>(width);
  const auto s = static_cast<int32_t>(slices), sc = static_cast<int32_t>(slice_channels);
  const bool narrow = FitsInt32(tiles);
  if (p.points == 1) {
    narrow ? Launch<1, int32_t>(p, features, c, h, w, best_rbboxes, tiles, image_tiles, s, sc, output, stream)
           : Launch<1, int64_t>(p, features, c, h, w, best_rbboxes, tiles, image_tiles, s, sc, output, stream);
  } else {
    narrow ? Launch<5, int32_t>(p, features, c, h, w, best_rbboxes, tiles, image_tiles, s, sc, output, stream)
           : Launch<5, int64_t>(p, features, c, h, w, best_rbboxes, tiles, image_tiles, s, sc, output, stream);
  }
  return LaunchStatus("the rotated feature align kernel", stream);
}

#define OPBRIDGE_ROTATED_FEATURE_ALIGN(T)                                                                     \
  template Status RotatedFeatureAlign<T>(const RotatedFeatureAlignParams&, const T*, int64_t, int64_t, int64_t, \
                                         int64_t, const T*, T*, Stream);
OPBRIDGE_ROTATED_FEATURE_ALIGN(float)
OPBRIDGE_ROTATED_FEATURE_ALIGN(shared::Float16)
OPBRIDGE_ROTATED_FEATURE_ALIGN(shared::BFloat16)
#undef OPBRIDGE_ROTATED_FEATURE_ALIGN

}  // namespace opbridge::cuda
