// PyTorch's F.interpolate index and weight arithmetic for the CPU kernels that reproduce
// torchvision's resizes bit for bit (PasteMasks, HeatmapsToKeypoints, BicubicInterpolate): the
// host-and-device functions of kernels/shared/interpolate.h (where the rules and the fused
// multiply-adds are described), and a loop shape that GCC vectorises.
#pragma once

#include <cstdint>

#include "kernels/shared/interpolate.h"

namespace opbridge::cpu {

using shared::CubicCombine;
using shared::CubicConvolution1;
using shared::CubicConvolution2;
using shared::CubicSourceTap;
using shared::CubicTap;
using shared::GuardIndexAndLambda;
using shared::InterpolateScale;
using shared::InterpolateSourceCoordinate;
using shared::LinearSourceTap;
using shared::LinearTap;
using shared::SourceIndexLambda;

// Runs body(x) for x in [0, count): blocks of 8 with a fixed-count inner loop, then the rest.
// GCC's -O2 cost model ("very cheap") vectorises the fixed-count loop where it leaves an open
// loop like these kernels' scalar; with std::fma in a function built for x86-64-v3 each block
// becomes a few 8-wide fused multiply-adds. Every x is computed exactly as in the plain loop.
template <class Body>
inline __attribute__((always_inline)) void ForEachInBlocksOf8(int64_t count, Body&& body) {
  int64_t x = 0;
  for (; x + 8 <= count; x += 8) {
    for (int l = 0; l < 8; ++l) body(x + l);
  }
  for (; x < count; ++x) body(x);
}

}  // namespace opbridge::cpu
