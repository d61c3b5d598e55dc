// Gather of top-k rows CUDA kernel (mmdeploy's GatherTopk). Framework-free: raw device pointers,
// the layout, device scratch and a stream.
#pragma once

#include <stdint.h>

#include "core/gather_topk.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// cpu::GatherTopk's output bit for bit (a copy of 4- or 8-byte elements) where the indices are in
// range; data, indices and output in device memory. The indices are checked on the GPU as they are
// read (GatherTopkElement): the rows an index out of range picks get every bit set. Asynchronous:
// nothing waits for the stream (the output's shape does not depend on the data).
template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, Stream stream);

}  // namespace opbridge::cuda
