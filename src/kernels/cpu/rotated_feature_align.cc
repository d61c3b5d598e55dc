// Rotated feature align CPU kernel.
//
// The rules and the float32 operation order are mmcv's rotated_feature_align_forward_cpu_kernel:
// per output (n, c, h, w), the box best_rbboxes[n, h, w] = (y, x, w, h, a) gives the sample
// points (the centre, then with points = 5 the corners c+w+h, c-w+h, c-w-h, c+w-h of the rotated
// box), each sampled bilinearly from plane (n, c) by RoIAlign's rules, and
//   out = in[n, c, h, w] + sample_0 + sample_1 + ...   (left to right)
// with each sample w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4 (left to right), every step a float32
// operation as in mmcv (the library is built without contraction into fused multiply-adds). Only
// cos and sin are computed otherwise (see PixelTaps).
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

#include "kernels/cpu/pixel_chunks.h"

namespace opbridge::cpu {
namespace {

// The bilinear taps of one sample point: the plane offsets of its 4 neighbours (mmcv's v1..v4:
// (y_low, x_low), (y_low, x_high), (y_high, x_low), (y_high, x_high)) and their weights
// w1..w4. A point outside the map has offset[0] = kOutside and reads 0.
struct PointTap {
  int32_t offset[4];
  float weight[4];
};
constexpr int32_t kOutside = -1;

// Taps are prepared for chunks of at most kChunkPoints points (1 MB), in tasks of kTapBlock
// pixels; each sampling task covers a run of at most kRunPixels pixels of one channel.
constexpr int64_t kChunkPoints = 32768;
constexpr int64_t kTapBlock = 1024;
constexpr int64_t kRunPixels = 2048;

// mmcv's bilinear_interpolate, as taps. A point with y < -1, y > H, x < -1 or x > W reads 0;
// this is tested first, as mmcv does, so a NaN coordinate of a point whose other coordinate is
// out of range reads 0 too. Otherwise a NaN coordinate gives NaN weights (mmcv casts NaN to an
// int, which is undefined, and reads wherever that points): the sample, and so the output, is
// NaN. Then coordinates <= 0 become 0, and the neighbours are clamped to the last row and
// column (edge replicate).
PointTap MakeTap(float y, float x, int64_t height, int64_t width) {
  PointTap t;
  if (y < -1.0f || y > static_cast<float>(height) || x < -1.0f || x > static_cast<float>(width)) {
    t = {{kOutside, kOutside, kOutside, kOutside}, {0.0f, 0.0f, 0.0f, 0.0f}};
    return t;
  }
  if (std::isnan(y) || std::isnan(x)) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    t = {{0, 0, 0, 0}, {nan, nan, nan, nan}};  // offset 0 exists: the plane is not empty
    return t;
  }
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  // y lies in [0, float(H)] now: the conversion is defined and truncates as mmcv's (int) does.
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<float>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<float>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const float ly = y - static_cast<float>(y_low), lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly, hx = 1.0f - lx;  // mmcv's 1. - ly: the same float
  t.offset[0] = static_cast<int32_t>(y_low * width + x_low);
  t.offset[1] = static_cast<int32_t>(y_low * width + x_high);
  t.offset[2] = static_cast<int32_t>(y_high * width + x_low);
  t.offset[3] = static_cast<int32_t>(y_high * width + x_high);
  t.weight[0] = hy * hx;
  t.weight[1] = hy * lx;
  t.weight[2] = ly * hx;
  t.weight[3] = ly * lx;
  return t;
}

// The taps of the sample points of one pixel's box (y, x, w, h, a), in mmcv's order and float32
// arithmetic.
void PixelTaps(const RotatedFeatureAlignParams& p, const float* box, int64_t height, int64_t width,
               PointTap* taps) {
  const float roi_y = box[0] * p.spatial_scale;
  const float roi_x = box[1] * p.spatial_scale;
  taps[0] = MakeTap(roi_y, roi_x, height, width);
  if (p.points == 1) return;
  const float roi_w = box[2] * p.spatial_scale;
  const float roi_h = box[3] * p.spatial_scale;
  const float roi_a = box[4];
  const float w_2 = roi_w / 2, h_2 = roi_h / 2;
  // mmcv calls cosf and sinf. glibc's are within an ulp of the true value but not correctly
  // rounded (about 1% of angles differ from it in the last bit), and x86-64 glibc picks an FMA
  // build of them on CPUs that have FMA. The float64 functions rounded to float32 give the
  // correctly rounded value (unless the true value lies within an ulp of float64 from a float32
  // rounding boundary), so results do not depend on the CPU or the C library.
  const float cosa = static_cast<float>(std::cos(static_cast<double>(roi_a)));
  const float sina = static_cast<float>(std::sin(static_cast<double>(roi_a)));
  const float wx = cosa * w_2, wy = sina * w_2;
  const float hx = -sina * h_2, hy = cosa * h_2;
  taps[1] = MakeTap(roi_y + wy + hy, roi_x + wx + hx, height, width);
  taps[2] = MakeTap(roi_y - wy + hy, roi_x - wx + hx, height, width);
  taps[3] = MakeTap(roi_y - wy - hy, roi_x - wx - hx, height, width);
  taps[4] = MakeTap(roi_y + wy - hy, roi_x + wx - hx, height, width);
}

// One sample: mmcv's w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4, or 0 outside the map.
inline float Sample(const float* plane, const PointTap& t) {
  if (t.offset[0] == kOutside) return 0.0f;
  return t.weight[0] * plane[t.offset[0]] + t.weight[1] * plane[t.offset[1]] +
         t.weight[2] * plane[t.offset[2]] + t.weight[3] * plane[t.offset[3]];
}

// Pixels first + [begin, end) of one plane, written to out[begin, end): the pixel's own value
// plus its samples, added in order. taps[i] are those of pixel first + i. The point count is a
// template parameter so that the inner loop has a fixed length.
template <int kPoints>
void AlignRun(const float* plane, int64_t first, const PointTap* taps, int64_t begin, int64_t end, float* out) {
  for (int64_t i = begin; i < end; ++i) {
    const PointTap* t = taps + i * kPoints;
    float value = plane[first + i];
    for (int k = 0; k < kPoints; ++k) value += Sample(plane, t[k]);
    out[i] = value;
  }
}

}  // namespace

Status RotatedFeatureAlign(const RotatedFeatureAlignParams& p, const float* features, int64_t batch,
                           int64_t channels, int64_t height, int64_t width, const float* best_rbboxes,
                           float* output, const TaskRunner& runner) {
  // An empty axis: no output element, nothing to read (with H or W = 0 there is no pixel).
  if (batch == 0 || channels == 0 || height == 0 || width == 0) return Status::Ok();
  if (height > INT32_MAX / width) {
    return Status::Error("features planes (H * W) of more than 2^31 - 1 elements are not supported, got ",
                         height, "x", width);
  }
  const int64_t plane = height * width;
  const int64_t points = p.points;
  const int64_t chunk_pixels = kChunkPoints / points;
  std::vector<PointTap> taps(static_cast<size_t>(std::min(chunk_pixels, plane) * points));

  auto prepare = [&](int64_t n, int64_t chunk, int64_t begin, int64_t end) {
    const float* boxes = best_rbboxes + (n * plane + chunk) * 5;
    for (int64_t i = begin; i < end; ++i) PixelTaps(p, boxes + i * 5, height, width, taps.data() + i * points);
  };
  auto apply = [&](int64_t n, int64_t c, int64_t chunk, int64_t begin, int64_t end) {
    const float* plane_in = features + (n * channels + c) * plane;
    float* out = output + (n * channels + c) * plane + chunk;
    if (points == 1) {
      AlignRun<1>(plane_in, chunk, taps.data(), begin, end, out);
    } else {
      AlignRun<5>(plane_in, chunk, taps.data(), begin, end, out);
    }
  };
  return ForEachPixelChunk(runner, batch, channels, plane, {chunk_pixels, kTapBlock, kRunPixels}, prepare, apply);
}

}  // namespace opbridge::cpu
