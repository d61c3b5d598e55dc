// Multi-scale RoIAlign CPU kernel: torchvision's _multiscale_roi_align. Every RoI gets its level
// from the LevelMapper; the RoIs of each level are pooled by the RoIAlign kernel at that level's
// scale, straight into their rows of the output (no gather or scatter of pooled features). A
// RoI without a level (a NaN box) keeps a zero row, as torchvision's result, which starts as
// zeros, does.
#include "kernels/cpu/multi_scale_roi_align.h"

#include <algorithm>

#include "kernels/cpu/roi_align.h"

namespace opbridge::cpu {

template <class T>
Status MultiScaleRoiAlign(const MultiScaleRoiAlignParams& params, const FeatureLevel<T>* levels, int64_t batch,
                          int64_t channels, const T* rois, int64_t num_rois, T* output,
                          ScratchAllocator& scratch, const TaskRunner& runner) {
  const int64_t row_size = channels * params.roi_align.output_height * params.roi_align.output_width;
  if (num_rois == 0 || row_size == 0) return Status::Ok();
  const size_t bytes = ArenaBytes<int64_t>(num_rois) * 2 + ArenaBytes<float>(5 * num_rois);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int64_t* level_of = arena.Take<int64_t>(num_rois);
  int64_t* rows = arena.Take<int64_t>(num_rois);
  float* level_rois = arena.Take<float>(5 * num_rois);  // in float32: half RoIs are converted as they are read
  for (int64_t r = 0; r < num_rois; ++r) {
    float box[4];
    shared::LoadRun(rois + 5 * r + 1, 4, box);
    level_of[r] = MultiScaleRoiLevel(params, box);
    if (level_of[r] < 0) std::fill(output + r * row_size, output + (r + 1) * row_size, T{});  // +0 in every type
  }
  const int64_t num_levels = static_cast<int64_t>(params.spatial_scales.size());
  CallSampleWork work(channels);  // the levels' RoIs add to the call's work limit
  for (int64_t l = 0; l < num_levels; ++l) {
    int64_t count = 0;
    for (int64_t r = 0; r < num_rois; ++r) {
      if (level_of[r] != l) continue;
      shared::LoadRun(rois + 5 * r, 5, level_rois + 5 * count);
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

template Status MultiScaleRoiAlign<float>(const MultiScaleRoiAlignParams&, const FeatureLevel<float>*, int64_t,
                                          int64_t, const float*, int64_t, float*, ScratchAllocator&, const TaskRunner&);
template Status MultiScaleRoiAlign<shared::Float16>(const MultiScaleRoiAlignParams&,
                                                    const FeatureLevel<shared::Float16>*, int64_t, int64_t,
                                                    const shared::Float16*, int64_t, shared::Float16*,
                                                    ScratchAllocator&, const TaskRunner&);
template Status MultiScaleRoiAlign<shared::BFloat16>(const MultiScaleRoiAlignParams&,
                                                     const FeatureLevel<shared::BFloat16>*, int64_t, int64_t,
                                                     const shared::BFloat16*, int64_t, shared::BFloat16*,
                                                     ScratchAllocator&, const TaskRunner&);

}  // namespace opbridge::cpu
