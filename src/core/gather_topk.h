// Gather of top-k rows (mmdeploy's GatherTopk): shape and index validation, shared by every backend.
//
// out[a..., g, c...] = data[a..., indices[a..., g], c...], where the leading dims a... of
// indices and data agree: PyTorch's x[batch_inds, inds, ...] (mmdet's post-processing after topk).
// See docs/ops/gather_topk.md.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

// The gather viewed as [batch, candidates, row] -> [batch, picks, row]: batch is the product of
// indices' leading dims (shared with data), candidates data's gathered axis (G0), picks indices'
// last dim (G1), row the product of data's trailing dims (one gathered row's elements).
struct GatherTopkLayout {
  int64_t batch = 1;
  int64_t candidates = 0;
  int64_t picks = 0;
  int64_t row = 1;
};

// Shape rules: indices has rank >= 1, data at least indices' rank, and their leading dims (all
// of indices' but its last) are equal. The output shape: indices' shape then data's dims after
// the gathered axis.
Status CheckGatherTopkShapes(const Shape& data, const Shape& indices, Shape* output);
GatherTopkLayout MakeGatherTopkLayout(const Shape& data, const Shape& indices);

// Data rule: every index is in [-candidates, candidates), a negative one counting from the end as
// in PyTorch's indexing. The error names the first index out of range by its position.
// GatherTopkSource is the rule for one index, host and device: the row it picks along the gathered
// axis, or -1 when it is out of range.
OPBRIDGE_HD inline int64_t GatherTopkSource(int64_t index, int64_t candidates) {
  if (index < -candidates || index >= candidates) return -1;
  return index < 0 ? index + candidates : index;
}
// Element e of the [batch, picks, row] output, host and device (the CUDA kernel's thread e): the
// word the rule copies, or, where an index out of range picks the row, every bit set (NaN in float
// data, -1 in integer data). That is the CUDA kernel's defined result for an index the CPU op
// refuses: the GPU never waits to report it (docs/ops/gather_topk.md, "On the GPU").
template <class Word, class Index, class Offset>
OPBRIDGE_HD inline Word GatherTopkElement(const Word* data, const Index* indices, Offset picks, Offset candidates,
                                          Offset row, Offset e) {
  const Offset r = e / row, c = e - r * row;
  const int64_t source = GatherTopkSource(static_cast<int64_t>(indices[r]), static_cast<int64_t>(candidates));
  if (source < 0) return static_cast<Word>(~Word{0});
  return data[((r / picks) * candidates + static_cast<Offset>(source)) * row + c];
}
template <class Index>
Status CheckGatherTopkIndices(const Index* indices, const Shape& indices_shape, int64_t candidates,
                              int64_t gathered_axis);

}  // namespace opbridge
