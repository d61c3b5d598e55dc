// Multi-level rotated RoIAlign (mmrotate's RotatedSingleRoIExtractor over mmcv's RoIAlignRotated;
// mmdeploy's TensorRT plugin MMCVMultiLevelRotatedRoiAlign): parameters and validation, shared by
// every backend.
//
// Each rotated RoI is assigned to one feature map by the finest_scale rule on sqrt(w * h), its
// width and height are optionally multiplied by roi_scale_factor (mmrotate's roi_rescale), and it
// is pooled from that map with RoIAlignRotated at 1 / stride. See
// docs/ops/multi_level_rotated_roi_align.md for where opbridge differs from the plugin.
#pragma once

#include <cstdint>
#include <vector>

#include "core/host_device.h"
#include "core/multi_level_roi_align.h"
#include "core/roi_align_rotated.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct MultiLevelRotatedRoiAlignParams : RoiLevelParams {
  RoiAlignRotatedParams roi_align;  // output size, sampling ratio, aligned, clockwise
};

// Attribute rules (session creation; clockwise and aligned are 0 or 1: the values the manifest allows
// were checked by the glue's generated reader).
Status MakeMultiLevelRotatedRoiAlignParams(int64_t output_height, int64_t output_width, int64_t clockwise,
                                           int64_t sampling_ratio, const std::vector<float>& featmap_strides,
                                           float roi_scale_factor, int64_t finest_scale, int64_t aligned,
                                           MultiLevelRotatedRoiAlignParams* params);

// Shape rules: rois [R, 6]; one feature map per stride, each [N, C, H_l, W_l] with the N and C of
// map 0.
Status CheckMultiLevelRotatedRoiAlignShapes(const MultiLevelRotatedRoiAlignParams& params, const Shape& rois,
                                            const std::vector<Shape>& features);

// mmrotate's RotatedSingleRoIExtractor.roi_rescale of a rotated box (cx, cy, w, h, theta), in
// float32: w and h multiplied by `factor` (new_rois[:, 3] = w_scale_factor * new_rois[:, 3]: one
// float32 product each), the rest as given. Host and device (the CUDA kernel maps RoIs in the thread).
OPBRIDGE_HD inline void MmrotateRoiRescale(const float* box, float factor, float* rescaled) {
  for (int k = 0; k < 5; ++k) rescaled[k] = box[k];
  rescaled[2] = factor * box[2];
  rescaled[3] = factor * box[3];
}

}  // namespace opbridge
