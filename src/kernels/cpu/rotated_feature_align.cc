// Rotated feature align CPU kernel.
//
// The rules and the float32 operation order are mmcv's rotated_feature_align_forward_cpu_kernel:
// per output (n, c, h, w), the box best_rbboxes[n, h, w] = (y, x, w, h, a) gives the sample
// points (the centre, then with points = 5 the corners c+w+h, c-w+h, c-w-h, c+w-h of the rotated
// box), each sampled bilinearly from plane (n, c) by RoIAlign's rules, and
//   out = in[n, c, h, w] + sample_0 + sample_1 + ...   (left to right)
// with each sample w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4 (left to right), every step a float32
// operation as in mmcv (the library is built without contraction into fused multiply-adds). Only
// cos and sin are computed otherwise (see shared::PixelTaps, which the CUDA kernel runs too).
//
// Work layout (ForEachPixelChunk): the points depend on (n, h, w) only, so the taps of a chunk of
// pixels (4 plane offsets and 4 weights per point) are computed once for all channels; then one
// task per channel and run of pixels reads that channel's plane, which stays in cache, at those
// taps. Every output element is written by exactly one task: results do not depend on the
// threads.
#include "kernels/cpu/rotated_feature_align.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/bilinear_taps.h"
#include "kernels/cpu/pixel_chunks.h"
#include "kernels/shared/rotated_feature_align_taps.h"

namespace opbridge::cpu {
namespace {

// Taps are prepared for chunks of at most kChunkPoints points (1 MB), in tasks of kTapBlock
// pixels; each sampling task covers a run of at most kRunPixels pixels of one channel.
constexpr int64_t kChunkPoints = 32768;
constexpr int64_t kTapBlock = 1024;
constexpr int64_t kRunPixels = 2048;

using shared::PixelTaps;

// Pixels first + [begin, end) of one plane, written to out[begin, end): the pixel's own value
// plus its samples, added in order. taps[i] are those of pixel first + i. The point count is a
// template parameter so that the inner loop has a fixed length.
// T: the storage type (half values read as the floats they hold, each output rounded once).
template <int kPoints, class T>
void AlignRun(const T* plane, int64_t width, int64_t first, const BilinearTaps* taps, int64_t begin, int64_t end,
              T* out) {
  for (int64_t i = begin; i < end; ++i) {
    const BilinearTaps* t = taps + i * kPoints;
    float value = shared::Load(plane + first + i);
    for (int k = 0; k < kPoints; ++k) value += BilinearSample(t[k], plane, width);
    shared::Store(out + i, value);
  }
}

}  // namespace

template <class T>
Status RotatedFeatureAlign(const RotatedFeatureAlignParams& p, const T* features, int64_t batch, int64_t channels,
                           int64_t height, int64_t width, const T* best_rbboxes, T* output, const TaskRunner& runner) {
  // An empty axis: no output element, nothing to read (with H or W = 0 there is no pixel).
  if (batch == 0 || channels == 0 || height == 0 || width == 0) return Status::Ok();
  const int64_t plane = height * width;
  const int64_t points = p.points;
  const int64_t chunk_pixels = kChunkPoints / points;
  std::vector<BilinearTaps> taps(static_cast<size_t>(std::min(chunk_pixels, plane) * points));

  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    const T* boxes = best_rbboxes + (n * plane + chunk) * 5;
    for (int64_t i = begin; i < end; ++i) PixelTaps(p, boxes + i * 5, height, width, taps.data() + i * points);
  };
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    const T* plane_in = features + (n * channels + c) * plane;
    T* out = output + (n * channels + c) * plane + chunk;
    if (points == 1) {
      AlignRun<1>(plane_in, width, chunk, taps.data(), begin, end, out);
    } else {
      AlignRun<5>(plane_in, width, chunk, taps.data(), begin, end, out);
    }
  };
  return ForEachPixelChunk(runner, batch, channels, plane, {chunk_pixels, kTapBlock, kRunPixels}, prepare, apply);
}

#define OPBRIDGE_ROTATED_FEATURE_ALIGN(T)                                                                     \
  template Status RotatedFeatureAlign<T>(const RotatedFeatureAlignParams&, const T*, int64_t, int64_t, int64_t, \
                                         int64_t, const T*, T*, const TaskRunner&);
OPBRIDGE_ROTATED_FEATURE_ALIGN(float)
OPBRIDGE_ROTATED_FEATURE_ALIGN(shared::Float16)
OPBRIDGE_ROTATED_FEATURE_ALIGN(shared::BFloat16)
#undef OPBRIDGE_ROTATED_FEATURE_ALIGN

}  // namespace opbridge::cpu
