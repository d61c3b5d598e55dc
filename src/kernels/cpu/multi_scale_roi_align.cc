// Multi-scale RoIAlign CPU kernel: torchvision's _multiscale_roi_align. Every RoI gets its level
// from the LevelMapper; the RoIs of each level are pooled by the RoIAlign kernel at that level's
// scale, straight into their rows of the output (no gather or scatter of pooled features). A
// RoI without a level (a NaN box) keeps a zero row, as torchvision's result, which starts as
// zeros, does.
#include "kernels/cpu/multi_scale_roi_align.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/roi_align.h"

namespace opbridge::cpu {

Status MultiScaleRoiAlign(const MultiScaleRoiAlignParams& params, const FeatureLevel* levels, int64_t batch,
                          int64_t channels, const float* rois, int64_t num_rois, float* output,
                          ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t row_size = channels * params.roi_align.output_height * params.roi_align.output_width;
  if (num_rois == 0 || row_size == 0) return Status::Ok();
  const size_t bytes = ArenaBytes<int64_t>(num_rois) * 2 + ArenaBytes<float>(5 * num_rois);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int64_t* level_of = arena.Take<int64_t>(num_rois);
  int64_t* rows = arena.Take<int64_t>(num_rois);
  float* level_rois = arena.Take<float>(5 * num_rois);
  for (int64_t r = 0; r < num_rois; ++r) {
    level_of[r] = MultiScaleRoiLevel(params, rois + 5 * r + 1);
    if (level_of[r] < 0) std::fill(output + r * row_size, output + (r + 1) * row_size, 0.0f);
  }
  const int64_t num_levels = static_cast<int64_t>(params.spatial_scales.size());
  CallSampleWork work(channels);  // the levels' RoIs add to the call's work limit
  for (int64_t l = 0; l < num_levels; ++l) {
    int64_t count = 0;
    for (int64_t r = 0; r < num_rois; ++r) {
      if (level_of[r] != l) continue;
      std::memcpy(level_rois + 5 * count, rois + 5 * r, 5 * sizeof(float));
      rows[count++] = r;
    }
    if (count == 0) continue;
    RoiAlignParams p = params.roi_align;
    p.spatial_scale = params.spatial_scales[l];
    OPBRIDGE_RETURN_IF_ERROR(RoiAlign(p, levels[l].data, batch, channels, levels[l].height, levels[l].width,
                                      level_rois, count, output, runner, rows, &work));
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
