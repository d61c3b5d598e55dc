// Deformable convolution CUDA kernel (DCNv1 and DCNv2), the images of a call together:
// 1. The taps: one thread per (image, deform group, kernel tap, output pixel) computes where its
//    sampling point falls (shared::MakeDeformTap, which the CPU kernel runs too) and writes the
//    top-left corner and the four weights to scratch, one array each, so that consecutive pixels are
//    consecutive words (laid out as the mask is: the product reads a tap's mask value in place).
// 2. The product, per image and conv group, all in one launch (chain_gemm.cuh, the pair in the
//    grid's z): out[n][g's channels][pixels] = W_g x columns_{n,g} + bias, an implicit GEMM: the B
//    loader computes the column element (K = tap x C/groups + c, pixel) from the pixel's tap and the
//    four corners of channel c, so the columns (dcn.large: 140 MB) are never written to memory. K
//    runs over taps, then channels, as the CPU kernel's columns do, and each output is one chain of
//    fused multiply-adds in that order, then + bias: the CPU kernel's bits on CPUs with FMA. The
//    tile fits the rows: 32 x 128 for 32 output channels a group, 256 x 64 for more than 128 (each
//    sampled element computed once for all of them), else 128 x 128.
//
// Expected times on an H100 (not yet measured). dcn.large ([1, 256, 100, 152], 256 x 256 x 3 x 3
// weights): 17.9 GFLOP in 238 tiles of 256 x 64, at the 25-35% of the FP32 rate (67 TFLOP/s) this
// simple tiling reaches, some 0.75-1.0 ms; before, 238 tiles of 128 x 128 sampled every column
// element twice (once per 128 rows), some 0.1 ms more. The row to beat: ORT's DeformConv 0.291 ms on
// an H200, through TF32 tensor cores (gpu.md), which this FP32 kernel cannot reach: the standing GPU
// issue measures it. dcn.groups ([2, 64, 64, 64], groups 2, 32 output channels a group, K = 288):
// one launch of 4 x 32 tiles of 32 x 128 (128 blocks), 1.2 M multiply-adds each, some 13 us at 40%
// of a SM's FP32 rate, plus the taps' launch: some 20-25 us, against ORT's 57; before, 2 images one
// after another, each 64 blocks of 128-row tiles three quarters past the edge: some 80-100 us. The
// longest dependent chain is one output's K multiply-adds (2,304 for dcn.large).
#include "kernels/cuda/deform_conv.h"

#include <algorithm>

#include "kernels/cuda/chain_gemm.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/shared/deform_conv_columns.h"

namespace opbridge::cuda {
namespace {

using shared::DeformGeometry;
using shared::DeformTapArrays;

__global__ void TapsKernel(const float* offset, DeformConvParams p, DeformGeometry g, int64_t count,
                           DeformTapArrays taps) {
  OPBRIDGE_CUDA_FOR(int64_t, at, count) shared::WriteDeformTap(offset, p, g, at, taps);
}

__global__ void FillBiasKernel(float* output, const float* bias, int64_t out_channels, int64_t pixels,
                               int64_t count) {
  OPBRIDGE_CUDA_FOR(int64_t, i, count) output[i] = bias != nullptr ? bias[(i / pixels) % out_channels] : 0.0f;
}

}  // namespace

Status DeformConv(const DeformConvParams& p, const DeformConvArgs& a, ScratchAllocator& scratch,
                  Stream stream) {
  ClearStaleError();
  const DeformGeometry g = shared::MakeDeformGeometry(p, a.channels, a.height, a.width, a.out_channels, a.out_h,
                                                      a.out_w, a.kernel_h, a.kernel_w);
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
  // The images whose taps fit the scratch budget go together (every image of the bench's and most
  // models' calls): their products are one launch. Each pass's product index z = image * groups +
  // group stays below 2^31.
  constexpr int64_t kTapBudgetBytes = int64_t{256} << 20;
  const int64_t image_tap_bytes = 24 * g.tap_count;  // 2 corners and 4 weights, 4 bytes each
  int64_t together = std::max<int64_t>(1, std::min<int64_t>(a.batch, kTapBudgetBytes / image_tap_bytes));
  together = std::min<int64_t>(together, std::max<int64_t>(1, (int64_t{1} << 30) / p.groups));
  const int64_t tap_count = together * g.tap_count;
  const size_t bytes = 2 * ArenaBytes<int32_t>(tap_count) + 4 * ArenaBytes<float>(tap_count);
  ScratchBlock block(scratch, bytes);  // on the stream's scratch: freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(bytes);
  Arena arena(block.data(), bytes);
  DeformTapArrays taps;
  taps.y_low = arena.Take<int32_t>(tap_count);
  taps.x_low = arena.Take<int32_t>(tap_count);
  for (float*& w : taps.w) w = arena.Take<float>(tap_count);
  for (int64_t n0 = 0; n0 < a.batch; n0 += together) {
    const int64_t images = std::min<int64_t>(together, a.batch - n0);
    TapsKernel<<<BlocksFor(images * g.tap_count), kThreads, 0, stream>>>(a.offset + n0 * 2 * g.tap_count, p, g,
                                                                         images * g.tap_count, taps);
    OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the deformable convolution tap kernel", stream));
    OPBRIDGE_RETURN_IF_ERROR(LaunchChainGemm<BCost::kComputed>(
        images * p.groups, g.out_per_group, g.pixels, row, shared::DeformWeights{a.weight, g},
        shared::DeformSampledColumns{a.input + n0 * g.image, taps, g, a.mask != nullptr ? a.mask + n0 * g.tap_count : nullptr},
        shared::DeformPlusBias{a.output + n0 * a.out_channels * g.pixels, a.bias, g}, stream,
        "the deformable convolution product kernel"));
  }
  return Status::Ok();
}

}  // namespace opbridge::cuda
