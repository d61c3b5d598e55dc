// Pooling RoIs level by level, shared by the multi-level RoI kernels (mmdet's SingleRoIExtractor,
// mmrotate's RotatedSingleRoIExtractor). Framework-free.
#pragma once

#include <cstdint>
#include <functional>

#include "core/multi_level_roi_align.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// The longest RoI row: a rotated box's (batch_index, cx, cy, w, h, theta).
constexpr int64_t kMaxRoiRowWidth = 6;

// How the level mapping reads one kind of RoI row (batch_index first).
struct RoiRowLayout {
  int64_t width;                                                       // values per row: 5 or 6
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
// zero row (output rows are row_size elements). Scratch: 16 + 4 * layout.width bytes per RoI.
// T is the storage type of the RoIs and the output (float, shared::Float16 or shared::BFloat16):
// half RoIs are converted to float32 as they are read (so with one map they are grouped too, as
// one group), and `pool` gets float32 RoIs whatever T is.
template <class T>
Status PoolRoisByLevel(const RoiLevelParams& params, const RoiRowLayout& layout, const T* rois, int64_t num_rois,
                       int64_t row_size, T* output, ScratchAllocator& scratch, const LevelPool& pool);

}  // namespace opbridge::cpu
