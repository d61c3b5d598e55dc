// Multi-level RoIAlign CPU kernel (NCHW; float32, float16 or bfloat16 storage with float32
// arithmetic). Framework-free.
#pragma once

#include <cstdint>

#include "core/multi_level_roi_align.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel

namespace opbridge::cpu {

// rois [num_rois, 5] (batch_index, x1, y1, x2, y2), batch indices already checked;
// levels[0 .. params.featmap_strides.size()); output [num_rois, channels, out_h, out_w]. Scratch:
// the rois grouped by level and their output rows (36 bytes per roi; see PoolRoisByLevel). T is the
// storage type of the maps, the rois and the output (float, shared::Float16 or shared::BFloat16):
// the float32 kernel's outputs on the stored values, each rounded once (kernels/cpu/roi_align.h).
template <class T>
Status MultiLevelRoiAlign(const MultiLevelRoiAlignParams& params, const FeatureLevel<T>* levels, int64_t batch,
                          int64_t channels, const T* rois, int64_t num_rois, T* output,
                          ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
