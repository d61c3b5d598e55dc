#include "core/roi_align.h"

#include <cmath>

namespace opbridge {

Status CheckRoiSampleBudget(int64_t roi, int64_t grid_h, int64_t grid_w, int64_t out_h, int64_t out_w) {
  if (!shared::WithinSampleBudget(grid_h, grid_w, out_h, out_w)) {
    return Status::Error("roi ", roi, " needs a ", grid_h, "x", grid_w, " sampling grid per bin, ",
                         "more than 2^20 sample rows or columns or 2^31 samples per roi (output ", out_h,
                         "x", out_w, "); pass a smaller positive sampling_ratio");
  }
  return Status::Ok();
}

Status CheckRoiAlignParams(const RoiAlignParams& p) {
  if (p.output_height < 1 || p.output_width < 1) {
    return Status::Error("output_height and output_width must be >= 1, got ", p.output_height,
                         " and ", p.output_width);
  }
  if (p.output_height > kRoiAlignMaxAxisSamples || p.output_width > kRoiAlignMaxAxisSamples ||
      p.output_height * p.output_width > kRoiAlignMaxRoiSamples) {
    return Status::Error("output_height and output_width must be <= 2^20 each and their product <= 2^31 ",
                         "(every bin takes at least one sample per axis), got ", p.output_height, " and ",
                         p.output_width);
  }
  if (!std::isfinite(p.spatial_scale) || p.spatial_scale <= 0.0f) {
    return Status::Error("spatial_scale must be a finite number > 0, got ", p.spatial_scale);
  }
  return Status::Ok();
}

Status CheckRoiAlignShapes(const Shape& input, const Shape& rois) {
  if (input.size() != 4) {
    return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(input));
  }
  if (rois.size() != 2 || rois[1] != 5) {
    return Status::Error("rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape ",
                         ShapeToString(rois));
  }
  return Status::Ok();
}

template <class R>
Status CheckRoiAlignRois(const R* rois, int64_t num_rois, int64_t batch, int64_t row_size) {
  for (int64_t r = 0; r < num_rois; ++r) {
    const float b = shared::Load(rois + r * row_size);
    if (!shared::IsRoiBatchIndex(b, batch)) {
      return Status::Error("rois[", r, ", 0] is the batch index and must lie in [0, ", batch,
                           ") after truncation toward zero, got ", b);
    }
  }
  return Status::Ok();
}

template Status CheckRoiAlignRois<float>(const float*, int64_t, int64_t, int64_t);
template Status CheckRoiAlignRois<shared::Float16>(const shared::Float16*, int64_t, int64_t, int64_t);
template Status CheckRoiAlignRois<shared::BFloat16>(const shared::BFloat16*, int64_t, int64_t, int64_t);

Shape RoiAlignOutputShape(const RoiAlignParams& p, const Shape& input, const Shape& rois) {
  return {rois[0], input[1], p.output_height, p.output_width};
}

}  // namespace opbridge
