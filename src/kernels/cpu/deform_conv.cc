// Deformable convolution CPU kernel.
//
// Numerics are torchvision's deform_conv2d CPU kernel: input channel c belongs to deform group
// c / (C / deform_groups); kernel tap (i, j) of output pixel (oy, ox) samples
//   y = (oy * stride_h - pad_h + i * dilation_h) + offset[dg, 2k], x = ... + offset[dg, 2k + 1]
// with k = i * kw + j, bilinearly (0 when y <= -1, y >= H, x <= -1 or x >= W; corners outside the
// map read 0), times mask[dg, k] for DCNv2; each sample is w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
// in that order, then times the mask, exactly as torchvision computes it. The sampled columns are
// multiplied by each conv group's weight matrix.
//
// Work layout, per image:
// 1. The image is transposed to pixel-major order with a border of zero pixels
//    ([H + 3][W + 2][C]: one zero row above, two below, one zero column each side). A bilinear
//    sample then reads its 4 corners as 4 contiguous runs of channels, so one tap position (a
//    corner index and 4 weights, computed once) serves every channel of its deform group with
//    vector loads. Corners outside the map land on the border and read 0 without a test, and a
//    sample outside the map reads the 2 x 2 block of zeros in the bottom-left corner of the
//    border, so that it is 0 even next to an infinite or NaN input.
// 2. One task per (conv group, tile of output pixels). A task samples its columns into a
//    tile-sized scratch buffer, pixel-major ([pixel][tap][channel], about kTileBytes), and
//    multiplies the group's weights by it (PackedGemm: out = weights x columns^T). The weights
//    are reordered to the same (tap, channel) order and packed once per call.
// Every output element is written by exactly one task: results do not depend on the thread count.
#include "kernels/cpu/deform_conv.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "kernels/cpu/bilinear_taps.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/packed_gemm.h"
#include "kernels/shared/deform_conv_taps.h"

namespace opbridge::cpu {
namespace {

// Sampled columns per task, in bytes: the tile width is chosen so that a tile of columns
// (tile pixels of K floats) is about this size, which keeps it in a 1 MB L2 cache between
// sampling and the product.
constexpr int64_t kTileBytes = 1024 * 1024;
// Tiles are whole multiples of every PackedGemm micro-tile height (12 and 6 pixels).
constexpr int64_t kTileStep = 12, kMinTile = 48, kMaxTile = 1020;

// Floats moved per task when reordering the weights and transposing the image: enough that a
// small problem runs these steps in one task instead of paying the pool's dispatch per row.
constexpr int64_t kCopyGrain = 64 * 1024;

// The bilinear samples of one (deform group, kernel tap) for the pixels of a tile, as a structure
// of arrays so that MakeTaps vectorizes: the top-left corner's index in the padded image, and
// torchvision's 4 weights (top-left, top-right, bottom-left, bottom-right).
struct TapRow {
  int32_t* corner;
  float* weight[4];
};

// 32-bit words of scratch per pixel: TapRow (5) and the pixel's row and column origins (2).
constexpr int64_t kTapWords = 7;

// y = (y_origin + y_tap) + dy, x likewise, for `pixels` pixels, by torchvision's rules without
// branches, so that the loop vectorizes: the sample is 0 when y <= -1, y >= H, x <= -1 or
// x >= W (it reads the zero block), and NaN when y or x is NaN (torchvision's integer cast of
// NaN is undefined).
// (Every pointer is __restrict: without that, GCC 12 gives up on the loop.)
__attribute__((always_inline)) inline void MakeTaps(const float* __restrict dy, const float* __restrict dx,
                                                    const int32_t* __restrict y_origin,
                                                    const int32_t* __restrict x_origin, int32_t y_tap,
                                                    int32_t x_tap, int64_t pixels, const PaddedImage& image,
                                                    const TapRow& taps) {
  int32_t* __restrict corner_out = taps.corner;
  float* __restrict w0 = taps.weight[0];
  float* __restrict w1 = taps.weight[1];
  float* __restrict w2 = taps.weight[2];
  float* __restrict w3 = taps.weight[3];
  const float h = static_cast<float>(image.height), w = static_cast<float>(image.width);
  const auto stride = static_cast<int32_t>(image.Stride()), zero_block = static_cast<int32_t>(image.ZeroBlock());
  for (int64_t q = 0; q < pixels; ++q) {
    const float y = static_cast<float>(y_origin[q] + y_tap) + dy[q];
    const float x = static_cast<float>(x_origin[q] + x_tap) + dx[q];
    const shared::DeformTap t = shared::MakeDeformTap(y, x, h, w);
    // (y_low, x_low) is in [-1, H - 1] x [-1, W - 1]: its padded index is in range.
    const int32_t corner = (t.y_low + 1) * stride + t.x_low + 1;
    corner_out[q] = t.inside ? corner : zero_block;
    w0[q] = t.w[0];
    w1[q] = t.w[1];
    w2[q] = t.w[2];
    w3[q] = t.w[3];
  }
}

// What SampleTile needs: one conv group's channels of one image, one tile of output pixels.
struct TileJob {
  const DeformConvParams* params;
  const DeformConvArgs* args;
  const float* image;   // the image, pixel-major and padded (PaddedImage)
  const float* offset;  // this image's offsets
  const float* mask;    // this image's mask, or nullptr
  int64_t group;        // conv group
  int64_t first_pixel, pixels;
  float* columns;  // [pixels][taps][C / groups]
  int32_t* words;  // kTapWords * pixels words of scratch
};

// Fills job.columns. Compiled for three x86-64 levels and chosen at run time (RunAtCpuLevel): the sample
// positions and the channel loop are where vector width pays (AVX-512 does 16 positions, or a
// 16-channel run of one corner, per instruction).
struct SampleTileBody {
  static constexpr const char* kName = "DeformConv2d: SampleTile";
  OPBRIDGE_ALWAYS_INLINE static void Run(const TileJob& job);
};

OPBRIDGE_ALWAYS_INLINE void SampleTileBody::Run(const TileJob& job) {
  const DeformConvParams& p = *job.params;
  const DeformConvArgs& a = *job.args;
  const PaddedImage padded{a.height, a.width};
  const int64_t c_per_group = a.channels / p.groups, c_per_dgroup = a.channels / p.deform_groups;
  const int64_t taps = a.kernel_h * a.kernel_w, row = taps * c_per_group;
  const int64_t out_pixels = a.out_h * a.out_w, len = job.pixels;
  const int64_t c_begin = job.group * c_per_group, c_end = c_begin + c_per_group;
  const int64_t right = a.channels, down = padded.Stride() * a.channels;  // corner to corner, in floats
  TapRow tap_row;
  tap_row.corner = job.words;
  for (int e = 0; e < 4; ++e) tap_row.weight[e] = reinterpret_cast<float*>(job.words + (1 + e) * len);
  // Each pixel's sampling origin without the tap: (oy * stride_h, ox * stride_w).
  int32_t* y_origin = job.words + 5 * len;
  int32_t* x_origin = job.words + 6 * len;
  for (int64_t q = 0, oy = job.first_pixel / a.out_w, ox = job.first_pixel % a.out_w; q < len; ++q, ++ox) {
    if (ox == a.out_w) ox = 0, ++oy;
    y_origin[q] = static_cast<int32_t>(oy * p.stride_h);
    x_origin[q] = static_cast<int32_t>(ox * p.stride_w);
  }
  // The deform groups that share channels with this conv group, and each one's channel range.
  for (int64_t dg = c_begin / c_per_dgroup; dg * c_per_dgroup < c_end; ++dg) {
    const int64_t lo = std::max(c_begin, dg * c_per_dgroup), hi = std::min(c_end, (dg + 1) * c_per_dgroup);
    const int64_t count = hi - lo;
    const float* image = job.image + lo;
    const float* offset = job.offset + dg * 2 * taps * out_pixels + job.first_pixel;
    const float* mask = job.mask ? job.mask + dg * taps * out_pixels + job.first_pixel : nullptr;
    for (int64_t k = 0; k < taps; ++k) {
      const int64_t i = k / a.kernel_w, j = k % a.kernel_w;
      MakeTaps(offset + 2 * k * out_pixels, offset + (2 * k + 1) * out_pixels, y_origin, x_origin,
               static_cast<int32_t>(i * p.dilation_h - p.pad_h), static_cast<int32_t>(j * p.dilation_w - p.pad_w),
               len, padded, tap_row);
      float* column = job.columns + k * c_per_group + (lo - c_begin);
      for (int64_t q = 0; q < len; ++q) {
        const float* __restrict v0 = image + static_cast<int64_t>(tap_row.corner[q]) * a.channels;
        const float* __restrict v1 = v0 + right;
        const float* __restrict v2 = v0 + down;
        const float* __restrict v3 = v2 + right;
        float* __restrict out = column + q * row;
        const float w0 = tap_row.weight[0][q], w1 = tap_row.weight[1][q];
        const float w2 = tap_row.weight[2][q], w3 = tap_row.weight[3][q];
        if (mask != nullptr) {
          const float m = mask[k * out_pixels + q];
          for (int64_t c = 0; c < count; ++c) {
            out[c] = m * shared::DeformTapValue(w0, w1, w2, w3, v0[c], v1[c], v2[c], v3[c]);
          }
        } else {
          for (int64_t c = 0; c < count; ++c) out[c] = shared::DeformTapValue(w0, w1, w2, w3, v0[c], v1[c], v2[c], v3[c]);
        }
      }
    }
  }
}

// Pixels per tile: at most about kTileBytes of columns, and the pixels split evenly over the
// tiles (1024 pixels make two tiles of 516 and 508, not 1020 and 4).
int64_t TileWidth(int64_t row, int64_t pixels) {
  int64_t widest = kTileBytes / (static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(row, 1));
  widest = std::clamp<int64_t>(widest, kMinTile, kMaxTile) / kTileStep * kTileStep;
  const int64_t tiles = (pixels + widest - 1) / widest;
  const int64_t even = ((pixels + tiles - 1) / tiles + kTileStep - 1) / kTileStep * kTileStep;
  return std::min(even, pixels);
}

}  // namespace

Status DeformConv(const DeformConvParams& p, const DeformConvArgs& a, ScratchAllocator& scratch,
                  const TaskRunner& runner) {
  const int64_t groups = p.groups;
  const int64_t c_per_group = a.channels / groups, out_per_group = a.out_channels / groups;
  const int64_t taps = a.kernel_h * a.kernel_w;
  const int64_t row = c_per_group * taps;  // GEMM K
  const int64_t pixels = a.out_h * a.out_w;
  const int64_t plane = a.height * a.width;
  const PaddedImage padded{a.height, a.width};
  if (a.batch == 0 || a.out_channels == 0 || pixels == 0) return Status::Ok();
  if (row == 0) {  // no input channels: the output is the bias
    for (int64_t n = 0; n < a.batch; ++n)
      for (int64_t o = 0; o < a.out_channels; ++o)
        std::fill(a.output + (n * a.out_channels + o) * pixels, a.output + (n * a.out_channels + o + 1) * pixels,
                  a.bias ? a.bias[o] : 0.0f);
    return Status::Ok();
  }
  const PackedGemm& gemm = PackedGemmForThisCpu();
  const int64_t tile = TileWidth(row, pixels);
  const int64_t tiles = (pixels + tile - 1) / tile;
  const size_t column_floats = static_cast<size_t>(row * tile);
  const size_t gemm_floats = gemm.scratch_size(out_per_group, tile);
  const size_t task_bytes = (column_floats + gemm_floats + kTapWords * tile) * sizeof(float);
  const size_t image_floats = static_cast<size_t>(padded.Pixels() * a.channels);
  const size_t reordered_floats = static_cast<size_t>(a.out_channels * row);
  const size_t packed_floats = gemm.packed_size(out_per_group, row);  // per conv group
  const size_t call_bytes = (image_floats + reordered_floats + groups * packed_floats) * sizeof(float);

  ScratchBlock call_memory(scratch, call_bytes);
  if (call_memory.data() == nullptr) {
    return Status::Error("out of memory for the transposed image and packed weights (", call_bytes, " bytes)");
  }
  float* image = static_cast<float*>(call_memory.data());
  float* reordered = image + image_floats;
  float* packed = reordered + reordered_floats;

  // Weights in the columns' (tap, channel) order, reordered[o][k * C/groups + c] = W[o][c][k],
  // then packed per conv group.
  const int64_t weights_per_task = std::max<int64_t>(1, kCopyGrain / row);
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(
      runner, NumChunks(static_cast<size_t>(a.out_channels), static_cast<size_t>(weights_per_task)),
      [&](size_t chunk) {
        const int64_t o0 = static_cast<int64_t>(chunk) * weights_per_task;
        for (int64_t o = o0; o < std::min(a.out_channels, o0 + weights_per_task); ++o) {
          const float* src = a.weight + o * row;
          float* dst = reordered + o * row;
          for (int64_t c = 0; c < c_per_group; ++c)
            for (int64_t k = 0; k < taps; ++k) dst[k * c_per_group + c] = src[c * taps + k];
        }
      }));
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(groups), [&](size_t g) {
    gemm.pack_weights(out_per_group, row, reordered + static_cast<int64_t>(g) * out_per_group * row, row,
                      packed + g * packed_floats);
  }));
  // The border: the row above the map, the two below it, and the column each side.
  std::fill(image, image + padded.Index(0, -1) * a.channels, 0.0f);
  std::fill(image + padded.Index(a.height, -1) * a.channels, image + image_floats, 0.0f);
  for (int64_t y = 0; y < a.height; ++y) {
    std::fill_n(image + padded.Index(y, -1) * a.channels, a.channels, 0.0f);
    std::fill_n(image + padded.Index(y, a.width) * a.channels, a.channels, 0.0f);
  }

  const int64_t rows_per_task = std::max<int64_t>(1, kCopyGrain / std::max<int64_t>(1, a.width * a.channels));
  std::atomic<bool> out_of_memory{false};
  for (int64_t n = 0; n < a.batch; ++n) {
    // 1. image[pixel][c] = input[n][c][pixel] inside the border, in blocks of 16 channels so that
    // each pixel's writes are one contiguous run.
    const float* input = a.input + n * a.channels * plane;
    OPBRIDGE_RETURN_IF_ERROR(
        ParallelFor(runner, NumChunks(static_cast<size_t>(a.height), static_cast<size_t>(rows_per_task)),
                    [&](size_t chunk) {
          const int64_t y0 = static_cast<int64_t>(chunk) * rows_per_task;
          const int64_t y1 = std::min(a.height, y0 + rows_per_task);
          for (int64_t y = y0; y < y1; ++y) {
            float* dst = image + padded.Index(y, 0) * a.channels;
            const float* src = input + y * a.width;
            for (int64_t c0 = 0; c0 < a.channels; c0 += 16) {
              const int64_t c1 = std::min(a.channels, c0 + 16);
              for (int64_t x = 0; x < a.width; ++x)
                for (int64_t c = c0; c < c1; ++c) dst[x * a.channels + c] = src[c * plane + x];
            }
          }
        }));

    // 2. Sample and multiply, per conv group and tile.
    OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(groups * tiles), [&](size_t task) {
      const int64_t g = static_cast<int64_t>(task) / tiles;
      const int64_t p0 = (static_cast<int64_t>(task) % tiles) * tile;
      const int64_t len = std::min(tile, pixels - p0);
      ScratchBlock memory(scratch, task_bytes);
      if (memory.data() == nullptr) {
        out_of_memory.store(true);
        return;
      }
      float* columns = static_cast<float*>(memory.data());
      RunAtCpuLevel<4, SampleTileBody>(TileJob{&p, &a, image, a.offset + n * 2 * p.deform_groups * taps * pixels,
                         a.mask ? a.mask + n * p.deform_groups * taps * pixels : nullptr, g, p0, len, columns,
                         reinterpret_cast<int32_t*>(columns + column_floats + gemm_floats)});
      // out[group's channels, tile] = bias + weight[group] x columns^T.
      gemm.multiply(out_per_group, len, row, packed + g * packed_floats, columns, row,
                    a.bias ? a.bias + g * out_per_group : nullptr,
                    a.output + (n * a.out_channels + g * out_per_group) * pixels + p0, pixels,
                    columns + column_floats);
    }));
    if (out_of_memory.load()) {
      return Status::Error("out of memory for the sampled columns (", task_bytes, " bytes)");
    }
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
