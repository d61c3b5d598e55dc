// Multi-scale deformable attention's taps of one sampling point as host-and-device functions: the
// point's pixel coordinates as F.grid_sample computes them (grid = 2 * location - 1, bilinear,
// align_corners=False), its north-west corner, which of its four corners lie on the level's map,
// and each corner's bilinear weight times the point's attention weight. The CPU kernel
// (kernels/cpu/multi_scale_deformable_attention.cc) and the CUDA kernel
// (kernels/cuda/multi_scale_deformable_attention.cu) both sample with these and add a point's
// a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3 to the output in point order, so their outputs are the same
// bits.
#pragma once

#include <stdint.h>

#include "core/host_device.h"
#include "kernels/shared/grid_sample_taps.h"

namespace opbridge::shared {

struct MsdaPointTaps {
  int32_t x0, y0;   // the north-west corner; the corners are (x0 + (k & 1), y0 + (k >> 1)), k = 0..3
  bool inside[4];   // corner k lies on the map (else it reads 0)
  float weight[4];  // corner k's bilinear weight times the attention weight
};

// The taps of the point at `location` (x, y normalized) with attention weight `attention` on a
// height x width map (bounds: GridTapBounds(height, width)).
OPBRIDGE_HD inline MsdaPointTaps MakeMsdaPointTaps(const float* location, float attention, int64_t height,
                                                   int64_t width, const GridTapBounds& bounds) {
  const Unnormalizer unnormalize_x(width, false), unnormalize_y(height, false);
  const GridBilinearTap t =
      GridSampleBilinearTap(unnormalize_x(2.0f * location[0] - 1.0f), unnormalize_y(2.0f * location[1] - 1.0f), bounds);
  // Each corner tested against the map. A point with no corner inside has the corner (-1, H): its
  // north row H is outside too, so the row test is 0 <= y < H on both rows.
  const int64_t x0 = t.x0, y0 = t.y0;
  const bool column_in[2] = {x0 >= 0, x0 + 1 < width};
  const bool row_in[2] = {y0 >= 0 && y0 < height, y0 + 1 < height};
  const float corner_weight[4] = {t.nw, t.ne, t.sw, t.se};
  MsdaPointTaps taps;
  taps.x0 = t.x0;
  taps.y0 = t.y0;
  for (int k = 0; k < 4; ++k) {
    taps.inside[k] = column_in[k & 1] && row_in[k >> 1];
    taps.weight[k] = attention * corner_weight[k];
  }
  return taps;
}

// What a point adds to an output channel, its corners' values v0..v3 (0 for a corner outside):
// a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3, in that order.
OPBRIDGE_HD inline float MsdaPointTerm(const MsdaPointTaps& t, float v0, float v1, float v2, float v3) {
  return t.weight[0] * v0 + t.weight[1] * v1 + t.weight[2] * v2 + t.weight[3] * v3;
}

}  // namespace opbridge::shared
