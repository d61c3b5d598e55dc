// Pooling RoIs level by level, shared by the multi-level RoI kernels (mmdet's SingleRoIExtractor,
// mmrotate's RotatedSingleRoIExtractor). Framework-free.
#pragma once

#include <cstdint>
#include <functional>

#include "core/multi_level_roi_align.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// How the level mapping reads one kind of RoI row (batch_index first).
struct RoiRowLayout {
  int64_t width;                                                       // floats per row: 5 or 6
  float (*scale)(const float* roi);                                    // sqrt(area), the mapper's input
  void (*rescale)(const float* roi, float factor, float* rescaled);  // writes the whole row
};

// Pools a group of RoIs (rows of layout.width floats) from one level into the output rows
// `rows` (nullptr: rows 0 .. count - 1).
using LevelPool = std::function<Status(int64_t level, const float* rois, int64_t count, const int64_t* rows)>;

// The extractors' forward: with one feature map every RoI is pooled from it as given (no mapper,
// no rescale); otherwise every RoI gets its level from MmdetRoiLevel on the box as given, is
// rescaled when params.rescale says so, and the RoIs are grouped by level (a counting sort, O(R)
// whatever the level count) and each group pooled into its rows. A RoI without a level gets a
// zero row (output rows are row_size floats). Scratch: 16 + 4 * layout.width bytes per RoI.
Status PoolRoisByLevel(const RoiLevelParams& params, const RoiRowLayout& layout, const float* rois, int64_t num_rois,
                       int64_t row_size, float* output, ScratchAllocator& scratch, const LevelPool& pool);

}  // namespace opbridge::cpu
