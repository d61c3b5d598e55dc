// Deformable convolution's CUDA product as host-and-device pieces (kernels/cuda/deform_conv.cu):
// where each (image, deform group, tap, pixel)'s point falls, written to the tap arrays, and the
// loaders and epilogue of the implicit GEMM over the images and conv groups of a call (product z =
// image * groups + group). The CUDA kernel runs them in its tap kernel and chain_gemm.cuh's tiles;
// the C++ device-code test runs the same functions on the host, each output one fmaf chain over K.
#pragma once

#include <stdint.h>

#include "core/deform_conv.h"
#include "core/host_device.h"
#include "kernels/shared/deform_conv_taps.h"

namespace opbridge::shared {

// The taps of the images of a call, [image][deform group][tap][pixel] each (the mask's layout).
struct DeformTapArrays {
  int32_t* y_low;
  int32_t* x_low;
  float* w[4];
};

struct DeformGeometry {
  int64_t height, width;  // input
  int64_t out_w, pixels;  // output
  int64_t kernel_w, taps;
  int64_t c_per_group, c_per_dgroup, out_per_group;
  int64_t groups, tap_count, image;  // conv groups; one image's taps ([deform group][tap][pixel]) and elements
  int64_t out_channels;
};

OPBRIDGE_HD inline DeformGeometry MakeDeformGeometry(const DeformConvParams& p, int64_t channels, int64_t height,
                                                    int64_t width, int64_t out_channels, int64_t out_h, int64_t out_w,
                                                    int64_t kernel_h, int64_t kernel_w) {
  DeformGeometry g;
  g.height = height;
  g.width = width;
  g.out_w = out_w;
  g.pixels = out_h * out_w;
  g.kernel_w = kernel_w;
  g.taps = kernel_h * kernel_w;
  g.c_per_group = channels / p.groups;
  g.c_per_dgroup = channels / p.deform_groups;
  g.out_per_group = out_channels / p.groups;
  g.groups = p.groups;
  g.tap_count = p.deform_groups * g.taps * g.pixels;
  g.image = channels * height * width;
  g.out_channels = out_channels;
  return g;
}

// The image and conv group of product z = image * groups + group.
struct DeformImageGroup {
  int image, group;
};
OPBRIDGE_HD inline DeformImageGroup DeformImageGroupOf(int z, int64_t groups) {
  const int g = static_cast<int>(groups);
  const int image = g == 1 ? z : z / g;
  return {image, z - image * g};
}

// Tap `at` = image * tap_count + (dg * taps + k) * pixels + q of the call's images (offset: the
// first image's): its point from the integer origin plus the offset in float, as the CPU kernel;
// a point off the map gets the top-left corner (-2, -2), where all four corners are off it.
OPBRIDGE_HD inline void WriteDeformTap(const float* offset, const DeformConvParams& p, const DeformGeometry& g,
                                       int64_t at, const DeformTapArrays& taps) {
  const int64_t image = at / g.tap_count, t = at - image * g.tap_count;
  const int64_t q = t % g.pixels, dk = t / g.pixels;
  const int64_t k = dk % g.taps, dg = dk / g.taps;
  const int64_t oy = q / g.out_w, ox = q % g.out_w, i = k / g.kernel_w, j = k % g.kernel_w;
  const float* dyx = offset + image * 2 * g.tap_count + (dg * 2 * g.taps + 2 * k) * g.pixels + q;
  const float y = static_cast<float>(static_cast<int32_t>(oy * p.stride_h + i * p.dilation_h - p.pad_h)) + dyx[0];
  const float x = static_cast<float>(static_cast<int32_t>(ox * p.stride_w + j * p.dilation_w - p.pad_w)) + dyx[g.pixels];
  const DeformTap tap = MakeDeformTap(y, x, static_cast<float>(g.height), static_cast<float>(g.width));
  taps.y_low[at] = tap.inside ? tap.y_low : -2;
  taps.x_low[at] = tap.inside ? tap.x_low : -2;
  for (int e = 0; e < 4; ++e) taps.w[e][at] = tap.w[e];
}

// A(z, o, K) = weight[g * out_per_group + o][c][tap], K = tap * c_per_group + c, g = z's group.
struct DeformWeights {
  const float* weight;
  DeformGeometry g;
  OPBRIDGE_HD float operator()(int z, int o, int k) const {
    const int group = DeformImageGroupOf(z, g.groups).group;
    const int tap = k / static_cast<int>(g.c_per_group), c = k - tap * static_cast<int>(g.c_per_group);
    return weight[((group * g.out_per_group + o) * g.c_per_group + c) * g.taps + tap];
  }
};

// B(z, K, q): the sample of channel g * c_per_group + c of z's image at tap `tap` of pixel q, times its
// mask value (the image's mask, [deform group][tap][pixel] as the taps; null without one).
struct DeformSampledColumns {
  const float* input;     // the call's first image, [N][C][H][W]
  DeformTapArrays taps;   // from the call's first image
  DeformGeometry g;
  const float* mask;      // from the call's first image, or null
  OPBRIDGE_HD float Corner(const float* plane, int32_t y, int32_t x) const {
    return y >= 0 && y < g.height && x >= 0 && x < g.width ? plane[static_cast<int64_t>(y) * g.width + x] : 0.0f;
  }
  OPBRIDGE_HD float operator()(int z, int k, int q) const {
    const DeformImageGroup ig = DeformImageGroupOf(z, g.groups);
    const int tap = k / static_cast<int>(g.c_per_group), c = k - tap * static_cast<int>(g.c_per_group);
    const int64_t channel = ig.group * g.c_per_group + c;
    const int64_t at = ig.image * g.tap_count + ((channel / g.c_per_dgroup) * g.taps + tap) * g.pixels + q;
    const float* plane = input + ig.image * g.image + channel * g.height * g.width;
    const int32_t y = taps.y_low[at], x = taps.x_low[at];
    const float value = DeformTapValue(taps.w[0][at], taps.w[1][at], taps.w[2][at], taps.w[3][at],
                                       Corner(plane, y, x), Corner(plane, y, x + 1), Corner(plane, y + 1, x),
                                       Corner(plane, y + 1, x + 1));
    return mask != nullptr ? mask[at] * value : value;
  }
};

// out[n][g * out_per_group + o][q] = sum + bias (0 without one, as the CPU kernel adds it).
struct DeformPlusBias {
  float* output;  // the call's first image's
  const float* bias;
  DeformGeometry g;
  OPBRIDGE_HD void operator()(int z, int o, int q, float sum) const {
    const DeformImageGroup ig = DeformImageGroupOf(z, g.groups);
    const int64_t channel = ig.group * g.out_per_group + o;
    output[(ig.image * g.out_channels + channel) * g.pixels + q] = sum + (bias != nullptr ? bias[channel] : 0.0f);
  }
};

}  // namespace opbridge::shared
