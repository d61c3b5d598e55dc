// Deformable convolution CUDA kernel (DCNv1 and DCNv2), one image at a time:
// 1. The taps: one thread per (deform group, kernel tap, output pixel) computes where its sampling
//    point falls (shared::MakeDeformTap, which the CPU kernel runs too) and writes the top-left
//    corner and the four weights to scratch, one array each, so that consecutive pixels are
//    consecutive words (laid out as the mask is: the product reads a tap's mask value in place).
// 2. The product, per conv group g (chain_gemm.cuh): out[g's channels][pixels] = W_g x columns_g
//    + bias, an implicit GEMM: the B loader computes the column element (K = tap x C/groups + c,
//    pixel) from the pixel's tap and the four corners of channel c, so the columns (dcn.large: 140
//    MB) are never written to memory. K runs over taps, then channels, as the CPU kernel's columns
//    do, and each output is one chain of fused multiply-adds in that order, then + bias: the CPU
//    kernel's bits on CPUs with FMA.
//
// Expected times on an H100: dcn.large ([1, 256, 100, 152], 256 x 256 x 3 x 3 weights): 17.9 GFLOP
// in 119 x 2 tiles of 128 x 128; at the 25-35% of the FP32 rate (67 TFLOP/s) a simple tiling without
// double buffering reaches, some 0.8-1.1 ms, plus a small overhead for the sampling (a B element
// costs 4 corner loads, mostly L1 hits, and 8 operations, against 128 multiply-adds it feeds). The
// row to beat: ORT's DeformConv 0.291 ms on an H200 (with TF32), torchvision 0.763 ms. dcn.groups
// ([2, 64, 64, 64], groups 2): 0.15 GFLOP, launch-bound, some 20-30 us. This is the kernel the
// device must measure first (issue 25): a faster tiling (double-buffered slices, 4-wide loads) is
// the known next step. The longest dependent chain is one output's K multiply-adds (2,304).
#include "kernels/cuda/deform_conv.h"

#include "kernels/cuda/chain_gemm.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/shared/deform_conv_taps.h"

namespace opbridge::cuda {
namespace {

// The taps of one image, [deform group][tap][pixel] each (the mask's layout).
struct TapArrays {
  int32_t* y_low;
  int32_t* x_low;
  float* w[4];
};

struct Geometry {
  int64_t height, width;  // input
  int64_t out_w, pixels;            // output
  int64_t kernel_w, taps;
  int64_t c_per_group, c_per_dgroup, out_per_group;
};

__global__ void TapsKernel(const float* offset, DeformConvParams p, Geometry g, int64_t count, TapArrays taps) {
  OPBRIDGE_CUDA_FOR(int64_t, t, count) {  // t = (dg * taps + k) * pixels + q
    const int64_t q = t % g.pixels, dk = t / g.pixels;
    const int64_t k = dk % g.taps, dg = dk / g.taps;
    const int64_t oy = q / g.out_w, ox = q % g.out_w, i = k / g.kernel_w, j = k % g.kernel_w;
    const float* dyx = offset + (dg * 2 * g.taps + 2 * k) * g.pixels + q;
    // The integer origin first, then + the offset in float, as the CPU kernel.
    const float y = static_cast<float>(static_cast<int32_t>(oy * p.stride_h + i * p.dilation_h - p.pad_h)) + dyx[0];
    const float x =
        static_cast<float>(static_cast<int32_t>(ox * p.stride_w + j * p.dilation_w - p.pad_w)) + dyx[g.pixels];
    const shared::DeformTap tap =
        shared::MakeDeformTap(y, x, static_cast<float>(g.height), static_cast<float>(g.width));
    // A point off the map reads no corner: its top-left corner is put where all four are off it.
    taps.y_low[t] = tap.inside ? tap.y_low : -2;
    taps.x_low[t] = tap.inside ? tap.x_low : -2;
    for (int e = 0; e < 4; ++e) taps.w[e][t] = tap.w[e];
  }
}

// A(g, o, K) = weight[g * out_per_group + o][c][tap], K = tap * c_per_group + c.
struct Weights {
  const float* weight;
  Geometry g;
  __device__ float operator()(int group, int o, int k) const {
    const int tap = k / static_cast<int>(g.c_per_group), c = k - tap * static_cast<int>(g.c_per_group);
    return weight[((group * g.out_per_group + o) * g.c_per_group + c) * g.taps + tap];
  }
};

// B(g, K, q): the sample of channel g * c_per_group + c at tap `tap` of pixel q, times its mask
// value (this image's mask, [deform group][tap][pixel] as the taps; null without one).
struct SampledColumns {
  const float* image;  // this image, [C][H][W]
  TapArrays taps;
  Geometry g;
  const float* mask;
  __device__ float Corner(const float* plane, int32_t y, int32_t x) const {
    return y >= 0 && y < g.height && x >= 0 && x < g.width ? plane[static_cast<int64_t>(y) * g.width + x] : 0.0f;
  }
  __device__ float operator()(int group, int k, int q) const {
    const int tap = k / static_cast<int>(g.c_per_group), c = k - tap * static_cast<int>(g.c_per_group);
    const int64_t channel = group * g.c_per_group + c;
    const int64_t at = ((channel / g.c_per_dgroup) * g.taps + tap) * g.pixels + q;
    const float* plane = image + channel * g.height * g.width;
    const int32_t y = taps.y_low[at], x = taps.x_low[at];
    const float value = shared::DeformTapValue(taps.w[0][at], taps.w[1][at], taps.w[2][at], taps.w[3][at],
                                               Corner(plane, y, x), Corner(plane, y, x + 1),
                                               Corner(plane, y + 1, x), Corner(plane, y + 1, x + 1));
    return mask != nullptr ? mask[at] * value : value;
  }
};

// out[g * out_per_group + o][q] = sum + bias (0 without one, as the CPU kernel adds it).
struct PlusBias {
  float* output;  // this image's
  const float* bias;
  int64_t out_per_group, pixels;
  __device__ void operator()(int group, int o, int q, float sum) const {
    const int64_t channel = group * out_per_group + o;
    output[channel * pixels + q] = sum + (bias != nullptr ? bias[channel] : 0.0f);
  }
};

__global__ void FillBiasKernel(float* output, const float* bias, int64_t out_channels, int64_t pixels,
                               int64_t count) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) output[i] = bias != nullptr ? bias[(i / pixels) % out_channels] : 0.0f;
}

}  // namespace

Status DeformConv(const DeformConvParams& p, const DeformConvArgs& a, ScratchAllocator& scratch,
                  Stream stream) {
  ClearStaleError();
  Geometry g;
  g.height = a.height;
  g.width = a.width;
  g.out_w = a.out_w;
  g.pixels = a.out_h * a.out_w;
  g.kernel_w = a.kernel_w;
  g.taps = a.kernel_h * a.kernel_w;
  g.c_per_group = a.channels / p.groups;
  g.c_per_dgroup = a.channels / p.deform_groups;
  g.out_per_group = a.out_channels / p.groups;
  const int64_t row = g.c_per_group * g.taps;  // the product's depth K
  if (a.batch == 0 || a.out_channels == 0 || g.pixels == 0) return Status::Ok();
  if (row == 0) {  // no input channels: the output is the bias
    const int64_t count = a.batch * a.out_channels * g.pixels;
    FillBiasKernel<<<BlocksFor(count), kThreads, 0, stream>>>(a.output, a.bias, a.out_channels, g.pixels, count);
    return LaunchStatus("the deformable convolution bias kernel", stream);
  }
  if (!ChainGemmFits(g.out_per_group, g.pixels, row) || g.height > INT32_MAX - 2 || g.width > INT32_MAX - 2) {
    return Status::Error("on the GPU the output pixels, the channels per group times the taps, and H and W must each "
                         "be below 2^31 - 256, got ", g.pixels, ", ", row, ", ", g.height, " and ", g.width);
  }
  const int64_t tap_count = p.deform_groups * g.taps * g.pixels;
  const size_t bytes = 2 * ArenaBytes<int32_t>(tap_count) + 4 * ArenaBytes<float>(tap_count);
  ScratchBlock block(scratch, bytes);  // on the stream's scratch: freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  TapArrays taps;
  taps.y_low = arena.Take<int32_t>(tap_count);
  taps.x_low = arena.Take<int32_t>(tap_count);
  for (float*& w : taps.w) w = arena.Take<float>(tap_count);
  const int64_t image = a.channels * a.height * a.width;
  for (int64_t n = 0; n < a.batch; ++n) {
    TapsKernel<<<BlocksFor(tap_count), kThreads, 0, stream>>>(a.offset + n * 2 * tap_count, p, g, tap_count, taps);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the deformable convolution tap kernel", stream));
    OPBRIDGE_RETURN_IF_ERROR(LaunchChainGemm(
        p.groups, g.out_per_group, g.pixels, row, Weights{a.weight, g},
        SampledColumns{a.input + n * image, taps, g, a.mask != nullptr ? a.mask + n * tap_count : nullptr},
        PlusBias{a.output + n * a.out_channels * g.pixels, a.bias, g.out_per_group, g.pixels}, stream,
        "the deformable convolution product kernel"));
  }
  return Status::Ok();
}

}  // namespace opbridge::cuda
