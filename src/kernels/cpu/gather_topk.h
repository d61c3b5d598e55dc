// Gather of top-k rows CPU kernel (mmdeploy's GatherTopk). Framework-free: raw pointers and sizes.
#pragma once

#include <cstdint>

#include "core/gather_topk.h"
#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

// output[b, g, :] = data[b, indices[b, g], :] over the layout's [batch, candidates, row] data and
// [batch, picks] indices, a negative index counting from the end. Elements are copied bit for bit:
// element_bytes is 4 (float32, int32) or 8 (float64, int64). Index is int32_t or int64_t; the
// indices must have passed CheckGatherTopkIndices.
template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, const TaskRunner& runner);

}  // namespace opbridge::cpu
