#include "core/multi_scale_deformable_attention.h"

#include <cstdint>

namespace opbridge {

Status CheckMsdaShapes(const Shape& value, const Shape& spatial_shapes, const Shape& level_start_index,
                       const Shape& sampling_locations, const Shape& attention_weights, MsdaDims* dims) {
  if (value.size() != 4) {
    return Status::Error("value must have rank 4 [N, S, M, D], got shape ", ShapeToString(value));
  }
  if (spatial_shapes.size() != 2 || spatial_shapes[1] != 2) {
    return Status::Error("spatial_shapes must have shape [L, 2] (H, W per level), got shape ",
                         ShapeToString(spatial_shapes));
  }
  if (spatial_shapes[0] < 1) return Status::Error("spatial_shapes must have at least one level, got shape [0, 2]");
  if (level_start_index.size() != 1 || level_start_index[0] != spatial_shapes[0]) {
    return Status::Error("level_start_index must have shape [L] with L = ", spatial_shapes[0],
                         " (the rows of spatial_shapes), got shape ", ShapeToString(level_start_index));
  }
  if (sampling_locations.size() != 6 || sampling_locations[5] != 2) {
    return Status::Error("sampling_locations must have shape [N, Lq, M, L, P, 2] (x, y last), got shape ",
                         ShapeToString(sampling_locations));
  }
  if (attention_weights.size() != 5) {
    return Status::Error("attention_weights must have rank 5 [N, Lq, M, L, P], got shape ",
                         ShapeToString(attention_weights));
  }
  MsdaDims d;
  d.batch = value[0];
  d.values = value[1];
  d.heads = value[2];
  d.channels = value[3];
  d.levels = spatial_shapes[0];
  d.queries = sampling_locations[1];
  d.points = sampling_locations[4];
  const Shape expected_locations{d.batch, d.queries, d.heads, d.levels, d.points, 2};
  if (sampling_locations != expected_locations) {
    return Status::Error("sampling_locations must have shape [N, Lq, M, L, P, 2] with N = ", d.batch, " and M = ",
                         d.heads, " (value [N, S, M, D]) and L = ", d.levels, " (spatial_shapes [L, 2]), got shape ",
                         ShapeToString(sampling_locations));
  }
  const Shape expected_weights{d.batch, d.queries, d.heads, d.levels, d.points};
  if (attention_weights != expected_weights) {
    return Status::Error("attention_weights must have shape [N, Lq, M, L, P] = ", ShapeToString(expected_weights),
                         " (from value and sampling_locations), got shape ", ShapeToString(attention_weights));
  }
  // Empty inputs (N = 0, say) may carry sizes whose products overflow; the output must not.
  int64_t count = 0;
  if (!CheckedNumElements({d.batch, d.queries, d.heads, d.channels}, &count)) {
    return Status::Error("the output [N, Lq, M * D] = [", d.batch, ", ", d.queries, ", ", d.heads, " * ", d.channels,
                         "] has more than 2^63 - 1 elements");
  }
  *dims = d;
  return Status::Ok();
}

Status CheckMsdaLevels(const std::vector<int64_t>& spatial_shapes, const std::vector<int64_t>& level_start_index,
                       const MsdaDims& dims) {
  int64_t start = 0;  // the first value row of level l; stays <= S, so nothing below overflows
  for (int64_t l = 0; l < dims.levels; ++l) {
    const int64_t h = spatial_shapes[2 * l], w = spatial_shapes[2 * l + 1];
    if (h < 1 || w < 1) {
      return Status::Error("spatial_shapes[", l, "] = (", h, ", ", w, ") must hold a height and width >= 1");
    }
    if (level_start_index[l] != start) {
      return Status::Error("level_start_index[", l, "] must be ", start,
                           " (the sum of H * W of the levels before it, from spatial_shapes), got ",
                           level_start_index[l]);
    }
    // h * w <= S - start, tested without forming the product.
    if (h > dims.values - start || w > (dims.values - start) / h) {
      return Status::Error("spatial_shapes must sum to S = ", dims.values, " (value [N, S, M, D]) over the levels ",
                           "(sum of H * W), but level ", l, " (", h, "x", w, ") starting at row ", start,
                           " ends past it");
    }
    if (h > INT32_MAX || w > INT32_MAX) {  // the sampling taps hold pixel coordinates as int32
      return Status::Error("spatial_shapes[", l, "] = (", h, ", ", w, ") must hold a height and width below 2^31");
    }
    start += h * w;
  }
  if (start != dims.values) {
    return Status::Error("spatial_shapes must sum to S = ", dims.values, " (value [N, S, M, D]) over the levels ",
                         "(sum of H * W), got ", start);
  }
  return Status::Ok();
}

Shape MsdaOutputShape(const MsdaDims& d) { return {d.batch, d.queries, d.heads * d.channels}; }

}  // namespace opbridge
