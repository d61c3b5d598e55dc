#include "kernels/cpu/roi_levels.h"

#include <algorithm>
#include <type_traits>

#include "core/half_storage.h"

namespace opbridge::cpu {

template <class T>
Status PoolRoisByLevel(const RoiLevelParams& params, const RoiRowLayout& layout, const T* rois, int64_t num_rois,
                       int64_t row_size, T* output, ScratchAllocator& scratch, const LevelPool& pool) {
  const int64_t num_levels = static_cast<int64_t>(params.featmap_strides.size());
  // With one map mmdet pools every RoI as given: no mapper, no rescale. Float RoIs go to `pool` as
  // they are; half ones are converted into one group below.
  const bool one_map = num_levels == 1;
  if constexpr (std::is_same_v<T, float>) {
    if (one_map) return pool(0, rois, num_rois, nullptr);
  }
  if (num_rois == 0) return Status::Ok();
  const int64_t width = layout.width;
  const size_t bytes = ArenaBytes<int64_t>(num_rois) * 2 + ArenaBytes<float>(width * num_rois);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int64_t* level_of = arena.Take<int64_t>(num_rois);
  int64_t* rows = arena.Take<int64_t>(num_rois);         // output row of each grouped roi
  float* grouped = arena.Take<float>(width * num_rois);  // the rois (rescaled) grouped by level

  // Counting sort by level: count, prefix sums, then place each RoI after those before it.
  int64_t start[kMultiLevelRoiAlignMaxLevels + 1] = {};
  float roi[kMaxRoiRowWidth];  // one RoI row in float32
  for (int64_t r = 0; r < num_rois; ++r) {
    shared::LoadRun(rois + width * r, width, roi);
    level_of[r] = one_map ? 0 : MmdetRoiLevel(layout.scale(roi), params.finest_scale, num_levels);
    if (level_of[r] < 0) {
      std::fill(output + r * row_size, output + (r + 1) * row_size, T{});  // +0 in every type
    } else {
      ++start[level_of[r] + 1];
    }
  }
  for (int64_t l = 0; l < num_levels; ++l) start[l + 1] += start[l];
  int64_t next[kMultiLevelRoiAlignMaxLevels];
  std::copy(start, start + num_levels, next);
  for (int64_t r = 0; r < num_rois; ++r) {
    if (level_of[r] < 0) continue;
    const int64_t k = next[level_of[r]]++;
    float* dst = grouped + width * k;
    shared::LoadRun(rois + width * r, width, roi);
    if (params.rescale && !one_map) {
      layout.rescale(roi, params.roi_scale_factor, dst);
    } else {
      std::copy(roi, roi + width, dst);
    }
    rows[k] = r;
  }
  for (int64_t l = 0; l < num_levels; ++l) {
    const int64_t count = start[l + 1] - start[l];
    if (count == 0) continue;
    OPBRIDGE_RETURN_IF_ERROR(pool(l, grouped + width * start[l], count, rows + start[l]));
  }
  return Status::Ok();
}

#define OPBRIDGE_POOL_ROIS_BY_LEVEL(T)                                                                           \
  template Status PoolRoisByLevel<T>(const RoiLevelParams&, const RoiRowLayout&, const T*, int64_t, int64_t, T*, \
                                     ScratchAllocator&, const LevelPool&);
OPBRIDGE_POOL_ROIS_BY_LEVEL(float)
OPBRIDGE_POOL_ROIS_BY_LEVEL(shared::Float16)
OPBRIDGE_POOL_ROIS_BY_LEVEL(shared::BFloat16)
#undef OPBRIDGE_POOL_ROIS_BY_LEVEL

}  // namespace opbridge::cpu
