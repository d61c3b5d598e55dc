#include "core/gather_topk.h"

#include <string>

namespace opbridge {

Status CheckGatherTopkShapes(const Shape& data, const Shape& indices, Shape* output) {
  if (indices.empty()) {
    return Status::Error("indices must have rank >= 1 [A..., G1] (the picks of each leading position), got a scalar");
  }
  if (data.size() < indices.size()) {
    return Status::Error("data must have at least indices' rank ", indices.size(), " ([A..., G0, C...] for indices ",
                         "[A..., G1]), got data ", ShapeToString(data), " and indices ", ShapeToString(indices));
  }
  for (size_t d = 0; d + 1 < indices.size(); ++d) {
    if (data[d] != indices[d]) {
      return Status::Error("data and indices must have the same leading dims (all of indices' but its last): dim ", d,
                           " is ", data[d], " in data ", ShapeToString(data), " and ", indices[d], " in indices ",
                           ShapeToString(indices));
    }
  }
  Shape out = indices;
  out.insert(out.end(), data.begin() + static_cast<int64_t>(indices.size()), data.end());
  int64_t count = 0;
  if (!CheckedNumElements(out, &count)) {
    return Status::Error("the output ", ShapeToString(out), " has more than 2^63 - 1 elements");
  }
  *output = out;
  return Status::Ok();
}

GatherTopkLayout MakeGatherTopkLayout(const Shape& data, const Shape& indices) {
  GatherTopkLayout layout;
  const size_t axis = indices.size() - 1;
  for (size_t d = 0; d < axis; ++d) layout.batch *= indices[d];
  layout.candidates = data[axis];
  layout.picks = indices[axis];
  for (size_t d = axis + 1; d < data.size(); ++d) layout.row *= data[d];
  return layout;
}

template <class Index>
Status CheckGatherTopkIndices(const Index* indices, const Shape& indices_shape, int64_t candidates,
                              int64_t gathered_axis) {
  const int64_t count = NumElements(indices_shape);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = indices[i];
    if (GatherTopkSource(v, candidates) >= 0) continue;
    const std::string where = "indices" + ShapeToString(UnravelIndex(i, indices_shape));  // "indices[1, 7]"
    if (candidates == 0) {
      return Status::Error(where, " = ", v, " picks from data's axis ", gathered_axis,
                           ", which has size 0 (nothing to gather)");
    }
    return Status::Error(where, " = ", v, " is out of range for data's axis ", gathered_axis, " of size ",
                         candidates, ": an index must be in [", -candidates, ", ", candidates - 1,
                         "] (a negative one counts from the end, as in PyTorch's indexing)");
  }
  return Status::Ok();
}

template Status CheckGatherTopkIndices<int32_t>(const int32_t*, const Shape&, int64_t, int64_t);
template Status CheckGatherTopkIndices<int64_t>(const int64_t*, const Shape&, int64_t, int64_t);

}  // namespace opbridge
