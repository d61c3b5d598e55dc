// Deformable convolution CPU kernel.
//
// Numerics are torchvision's deform_conv2d CPU kernel: input channel c belongs to deform group
// c / (C / deform_groups); kernel tap (i, j) of output pixel (oy, ox) samples
//   y = (oy * stride_h - pad_h + i * dilation_h) + offset[dg, 2k], x = ... + offset[dg, 2k + 1]
// with k = i * kw + j, bilinearly (0 when y <= -1, y >= H, x <= -1 or x >= W; corners outside the
// map read 0), times mask[dg, k] for DCNv2. The sampled columns, in (channel, i, j) row order
// like PyTorch's weight layout, are multiplied by each conv group's weight matrix.
//
// Work layout: one task per (image, conv group, tile of output pixels). A task samples its
// columns into a tile-sized scratch buffer (kTileBytes, which fits the L3 cache while the GEMM
// reads it) and multiplies it by the group's weights with a single-threaded GEMM. The sample positions
// and bilinear weights of a tile depend on (deform group, kernel tap, pixel) only, so they are
// computed once per deform group and reused by all its channels. Every output element is
// written by exactly one task: results do not depend on the thread count.
#include "kernels/cpu/deform_conv.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "kernels/cpu/gemm.h"

namespace opbridge::cpu {
namespace {

// Sampled columns per task, in bytes: the tile width is chosen so that a tile of columns
// (K rows of tile floats) is about this size. Measured on dcn.large (K = 2304), 1 thread:
// 1 MB 185 ms, 2.5 MB 173 ms, 5 MB 165 ms, 10 MB 157 ms; wider tiles make the GEMM re-pack the
// weights fewer times. 8 MB keeps the scratch of two tasks well inside a 32 MB L3.
constexpr int64_t kTileBytes = 8 * 1024 * 1024;
constexpr int64_t kMinTile = 16, kMaxTile = 4096;

// One bilinear sample: plane offsets of the 4 corners (-1 outside) and torchvision's weights.
struct Tap {
  int32_t idx[4];
  float w[4];
};

Tap MakeTap(float y, float x, int64_t height, int64_t width) {
  Tap t{{-1, -1, -1, -1}, {0.f, 0.f, 0.f, 0.f}};
  if (std::isnan(y) || std::isnan(x)) {  // torchvision's integer cast of NaN is undefined; NaN out
    t.w[0] = y + x;
    return t;
  }
  if (y <= -1.0f || static_cast<float>(height) <= y || x <= -1.0f || static_cast<float>(width) <= x) {
    return t;  // outside: the sample is 0
  }
  const float h_low_f = std::floor(y), w_low_f = std::floor(x);
  const int64_t h_low = static_cast<int64_t>(h_low_f), w_low = static_cast<int64_t>(w_low_f);
  const int64_t h_high = h_low + 1, w_high = w_low + 1;
  const float lh = y - h_low_f, lw = x - w_low_f;
  const float hh = 1.0f - lh, hw = 1.0f - lw;
  t.w[0] = hh * hw;
  t.w[1] = hh * lw;
  t.w[2] = lh * hw;
  t.w[3] = lh * lw;
  if (h_low >= 0 && w_low >= 0) t.idx[0] = static_cast<int32_t>(h_low * width + w_low);
  if (h_low >= 0 && w_high <= width - 1) t.idx[1] = static_cast<int32_t>(h_low * width + w_high);
  if (h_high <= height - 1 && w_low >= 0) t.idx[2] = static_cast<int32_t>(h_high * width + w_low);
  if (h_high <= height - 1 && w_high <= width - 1) t.idx[3] = static_cast<int32_t>(h_high * width + w_high);
  return t;
}

inline float Read(const float* plane, int32_t idx) { return idx >= 0 ? plane[idx] : 0.0f; }

// torchvision's bilinear_interpolate: w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4.
inline float Sample(const Tap& t, const float* plane) {
  return t.w[0] * Read(plane, t.idx[0]) + t.w[1] * Read(plane, t.idx[1]) + t.w[2] * Read(plane, t.idx[2]) +
         t.w[3] * Read(plane, t.idx[3]);
}

// Channels sampled together per tap load. (Sampling is scalar on purpose: an AVX2 version with
// masked gathers was measured 30% slower on the development machine's AMD CPU.)
constexpr int64_t kChannelBlock = 4;

int64_t TileWidth(int64_t rows, int64_t pixels) {
  int64_t tile = kTileBytes / (static_cast<int64_t>(sizeof(float)) * std::max<int64_t>(rows, 1));
  tile = std::clamp<int64_t>(tile, kMinTile, kMaxTile);
  tile = std::max<int64_t>(16, tile / 16 * 16);  // whole SIMD widths
  return std::min(tile, pixels);
}

}  // namespace

Status DeformConv(const DeformConvParams& p, const DeformConvArgs& a, ScratchAllocator& scratch,
                  const TaskRunner& runner) {
  const int64_t groups = p.groups, dgroups = p.deform_groups;
  const int64_t c_per_group = a.channels / groups, out_per_group = a.out_channels / groups;
  const int64_t c_per_dgroup = a.channels / dgroups;
  const int64_t taps_per_pixel = a.kernel_h * a.kernel_w;
  const int64_t rows = c_per_group * taps_per_pixel;  // GEMM K
  const int64_t pixels = a.out_h * a.out_w;
  const int64_t plane = a.height * a.width;
  if (plane > INT32_MAX) return Status::Error("input planes of more than 2^31 - 1 elements are not supported");
  if (a.batch == 0 || a.out_channels == 0 || pixels == 0) return Status::Ok();
  if (rows == 0) {  // no input channels: the output is the bias
    for (int64_t n = 0; n < a.batch; ++n)
      for (int64_t o = 0; o < a.out_channels; ++o)
        std::fill(a.output + (n * a.out_channels + o) * pixels, a.output + (n * a.out_channels + o + 1) * pixels,
                  a.bias ? a.bias[o] : 0.0f);
    return Status::Ok();
  }
  const int64_t tile = TileWidth(rows, pixels);
  const int64_t tiles = (pixels + tile - 1) / tile;
  const size_t column_bytes = static_cast<size_t>(rows * tile) * sizeof(float);
  const size_t tap_bytes = static_cast<size_t>(taps_per_pixel * tile) * (sizeof(Tap) + sizeof(float));

  std::atomic<bool> out_of_memory{false};
  Status status = ParallelFor(runner, static_cast<size_t>(a.batch * groups * tiles), [&](size_t task) {
    const int64_t n = static_cast<int64_t>(task) / (groups * tiles);
    const int64_t g = (static_cast<int64_t>(task) / tiles) % groups;
    const int64_t p0 = (static_cast<int64_t>(task) % tiles) * tile;
    const int64_t len = std::min(tile, pixels - p0);

    ScratchBlock memory(scratch, column_bytes + tap_bytes);
    if (memory.data() == nullptr) {
      out_of_memory.store(true);
      return;
    }
    float* columns = static_cast<float*>(memory.data());  // [rows][tile]
    Tap* taps = reinterpret_cast<Tap*>(static_cast<char*>(memory.data()) + column_bytes);  // [k][tile]
    float* masks = reinterpret_cast<float*>(taps + taps_per_pixel * tile);                 // [k][tile]

    // 1. Sample the columns of this conv group's channels, up to kChannelBlock channels of one
    // deform group at a time: each tap is loaded once for the block.
    int64_t tapped_dgroup = -1;
    for (int64_t cl = 0; cl < c_per_group;) {
      const int64_t c = g * c_per_group + cl;
      const int64_t dg = c / c_per_dgroup;
      const int64_t block = std::min({kChannelBlock, c_per_group - cl, (dg + 1) * c_per_dgroup - c});
      if (dg != tapped_dgroup) {  // sample positions of this deform group, for the whole tile
        tapped_dgroup = dg;
        const float* offset = a.offset + (n * dgroups + dg) * 2 * taps_per_pixel * pixels;
        const float* mask = a.mask ? a.mask + (n * dgroups + dg) * taps_per_pixel * pixels : nullptr;
        for (int64_t k = 0; k < taps_per_pixel; ++k) {
          const int64_t i = k / a.kernel_w, j = k % a.kernel_w;
          const float* dy = offset + (2 * k) * pixels;
          const float* dx = offset + (2 * k + 1) * pixels;
          for (int64_t q = 0; q < len; ++q) {
            const int64_t pix = p0 + q;
            const int64_t oy = pix / a.out_w, ox = pix % a.out_w;
            const float y = static_cast<float>(oy * p.stride_h - p.pad_h + i * p.dilation_h) + dy[pix];
            const float x = static_cast<float>(ox * p.stride_w - p.pad_w + j * p.dilation_w) + dx[pix];
            taps[k * tile + q] = MakeTap(y, x, a.height, a.width);
            masks[k * tile + q] = mask ? mask[k * pixels + pix] : 1.0f;
          }
        }
      }
      const float* in[kChannelBlock];
      for (int64_t b = 0; b < block; ++b) in[b] = a.input + (n * a.channels + c + b) * plane;
      for (int64_t k = 0; k < taps_per_pixel; ++k) {
        const Tap* t = taps + k * tile;
        const float* m = masks + k * tile;
        if (block == kChannelBlock) {
          float* row[kChannelBlock];
          for (int64_t b = 0; b < kChannelBlock; ++b) row[b] = columns + ((cl + b) * taps_per_pixel + k) * tile;
          for (int64_t q = 0; q < len; ++q) {
            const Tap tap = t[q];
            const float mq = m[q];
            for (int64_t b = 0; b < kChannelBlock; ++b) {
              const float v = Sample(tap, in[b]);
              row[b][q] = a.mask ? mq * v : v;
            }
          }
        } else {
          for (int64_t b = 0; b < block; ++b) {
            float* row = columns + ((cl + b) * taps_per_pixel + k) * tile;
            for (int64_t q = 0; q < len; ++q) {
              const float v = Sample(t[q], in[b]);
              row[q] = a.mask ? m[q] * v : v;
            }
          }
        }
      }
      cl += block;
    }

    // 2. out[group's channels, tile] = weight[group] x columns (+ bias).
    float* out = a.output + (n * a.out_channels + g * out_per_group) * pixels + p0;
    const float* weight = a.weight + g * out_per_group * rows;
    if (a.bias != nullptr) {
      for (int64_t o = 0; o < out_per_group; ++o) {
        std::fill(out + o * pixels, out + o * pixels + len, a.bias[g * out_per_group + o]);
      }
    }
    Sgemm(out_per_group, len, rows, weight, rows, columns, tile, a.bias != nullptr, out, pixels);
  });
  OPBRIDGE_RETURN_IF_ERROR(status);
  if (out_of_memory.load()) return Status::Error("out of memory for the sampled columns (", column_bytes, " bytes)");
  return Status::Ok();
}

}  // namespace opbridge::cpu
