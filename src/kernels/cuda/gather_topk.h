// Gather of top-k rows CUDA kernel (mmdeploy's GatherTopk). Framework-free: raw device pointers,
// the layout, device scratch and a stream.
#pragma once

#include <stdint.h>

#include "core/gather_topk.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// cpu::GatherTopk's output bit for bit (a copy of 4- or 8-byte elements) for the indices in range;
// data, indices and output in device memory. The indices are checked on the GPU as they are read
// (GatherTopkSource): *first_bad is the flat position in indices of the first one out of range, or -1.
// Finding it waits for the stream (a copy of 8 bytes to the host): the op's success depends on the
// data. Rows picked by a bad index are not written.
template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, int64_t* first_bad, ScratchAllocator& scratch, Stream stream);

}  // namespace opbridge::cuda
