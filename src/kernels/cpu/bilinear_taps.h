// Bilinear sampling rules as taps: the four neighbours of one point of a channel plane and their
// weights, computed once and applied to every channel. Framework-free. Three sections:
// - mmcv's (Caffe2's) rule, shared by the rotated RoI ops (RoIAlignRotated, rotated feature align),
//   from kernels/shared/mmcv_bilinear.h;
// - PaddedImage, a plane with a border of zeros (deformable convolution, the grid sampler);
// - ATen's grid_sampler_2d rule, its unnormalization and bilinear taps (the grid sampler reads a
//   PaddedImage, multi-scale deformable attention tests each corner against the plane), from
//   kernels/shared/grid_sample_taps.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/shared/grid_sample_taps.h"
#include "kernels/shared/mmcv_bilinear.h"

namespace opbridge::cpu {

// ---- mmcv's rule ---------------------------------------------------------------------------------
// In kernels/shared/mmcv_bilinear.h (host-and-device: the rotated CUDA kernels use it too).
using shared::BilinearSample;
using shared::BilinearTaps;
using shared::kTapsOutside;
using shared::MakeBilinearTaps;

// ---- A plane with a border of zeros ----------------------------------------------------------------

// Pixel (y, x) of a height x width map is at Index(y, x) of [H + 3][W + 2]: one zero row above,
// two below, one zero column each side. A bilinear sample whose north-west corner (x0, y0) lies in
// [-1, W - 1] x [-1, H - 1] then reads its 4 corners at Index(y0, x0), + 1, + Stride() and
// + Stride() + 1 without a test: corners outside the map land on the border. A sample with no
// corner inside reads the 2 x 2 block of zeros at ZeroBlock() (Index(H, -1), the bottom-left
// corner of the border), so that it is 0 even next to an infinite or NaN input.
struct PaddedImage {
  int64_t height, width;  // of the map
  int64_t Stride() const { return width + 2; }
  int64_t Pixels() const { return (height + 3) * Stride(); }
  int64_t Index(int64_t y, int64_t x) const { return (y + 1) * Stride() + (x + 1); }
  int64_t ZeroBlock() const { return (height + 1) * Stride(); }  // top-left of a 2 x 2 block of zeros
};

// ---- ATen's grid_sampler_2d rule -----------------------------------------------------------------
// In kernels/shared/grid_sample_taps.h (host-and-device: the CUDA grid sampler uses it too).
using shared::GridBilinearTap;
using shared::GridSampleBilinearTap;
using shared::GridTapBounds;
using shared::LargestFloatAtMost;
using shared::Unnormalizer;

}  // namespace opbridge::cpu
