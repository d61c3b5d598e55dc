// Multi-scale deformable attention (Deformable DETR): sizes, validation and output shape, shared
// by every backend.
//
// Numerics follow mmcv's pure-PyTorch formulation (multi_scale_deformable_attn_pytorch: one
// F.grid_sample per level, bilinear, zeros padding, align_corners=False, then a weighted sum);
// see docs/ops/multi_scale_deformable_attention.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// The sizes of one call, read from the input shapes.
struct MsdaDims {
  int64_t batch = 0;     // N
  int64_t values = 0;    // S: value rows, all levels' pixels
  int64_t heads = 0;     // M
  int64_t channels = 0;  // D: channels per head
  int64_t queries = 0;   // Lq
  int64_t levels = 0;    // L
  int64_t points = 0;    // P: sampling points per level
};

// Shape rules: value [N, S, M, D]; spatial_shapes [L, 2]; level_start_index [L];
// sampling_locations [N, Lq, M, L, P, 2]; attention_weights [N, Lq, M, L, P], with N, M, L, Lq and
// P equal wherever they appear, and L >= 1.
Status CheckMsdaShapes(const Shape& value, const Shape& spatial_shapes, const Shape& level_start_index,
                       const Shape& sampling_locations, const Shape& attention_weights, MsdaDims* dims);

// Data rules: every level's (H, W) (spatial_shapes, L rows of 2) is >= 1, the levels' H * W sum
// to S, and level_start_index[l] is the sum of the sizes of the levels before l.
Status CheckMsdaLevels(const std::vector<int64_t>& spatial_shapes, const std::vector<int64_t>& level_start_index,
                       const MsdaDims& dims);

// [N, Lq, M * D]
Shape MsdaOutputShape(const MsdaDims& dims);

}  // namespace opbridge
