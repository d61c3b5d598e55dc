// Gather of top-k rows CUDA kernel: one thread per output element, consecutive threads on
// consecutive elements of an output row and then the next row, so that the writes are coalesced and
// a warp reads whole source rows (the picks are scattered, their rows contiguous). Each thread runs
// GatherTopkElement (core/gather_topk.h): the element its row's index picks, or every bit set where
// that index is out of range. Nothing waits for the GPU: the output's shape does not depend on the
// data, so the op stays asynchronous on ORT's stream (the CPU op's error for a bad index becomes the
// defined all-ones rows, as RoIAlign's bad batch indices become NaN rows).
//
// Expected times on an H100 for the bench's cases (mmdet's post-processing, [2, 1000] picks of
// scores [2, 20000] or boxes [2, 20000, 4]): 2,000 to 8,000 elements, one wave of 8 to 32 blocks
// moving 16-96 KB: the launch (some 3-5 us) is the time. Before (e6826c2) each call also cleared an
// 8-byte slot and waited for its copy back to pageable memory (some 10-15 us more, and a stream
// synchronization). The longest chain is one element: an index load, then a data load.
#include "kernels/cuda/gather_topk.h"

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {
namespace {

template <class Word, class Index, class Offset>
__global__ void GatherTopkKernel(const Word* data, const Index* indices, Offset picks, Offset candidates, Offset row,
                                 Offset count, Word* output) {
  OPBRIDGE_CUDA_FOR(Offset, e, count) output[e] = GatherTopkElement(data, indices, picks, candidates, row, e);
}

template <class Word, class Index>
Status Launch(const void* data, const Index* indices, const GatherTopkLayout& layout, void* output, Stream stream) {
  const int64_t count = layout.batch * layout.picks * layout.row;
  const auto* from = static_cast<const Word*>(data);
  auto* to = static_cast<Word*>(output);
  if (FitsInt32(count) && FitsInt32(layout.batch * layout.candidates * layout.row)) {
    GatherTopkKernel<Word, Index, int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        from, indices, static_cast<int32_t>(layout.picks), static_cast<int32_t>(layout.candidates),
        static_cast<int32_t>(layout.row), static_cast<int32_t>(count), to);
  } else {
    GatherTopkKernel<Word, Index, int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        from, indices, layout.picks, layout.candidates, layout.row, count, to);
  }
  return LaunchStatus("the GatherTopk kernel", stream);
}

}  // namespace

template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, Stream stream) {
  ClearStaleError();
  if (layout.batch * layout.picks * layout.row == 0) return Status::Ok();
  if (element_bytes == 4) return Launch<uint32_t>(data, indices, layout, output, stream);
  if (element_bytes == 8) return Launch<uint64_t>(data, indices, layout, output, stream);
  return Status::Error("GatherTopk copies 4- or 8-byte elements, got ", element_bytes, " bytes");
}

template Status GatherTopk<int32_t>(const void*, int, const int32_t*, const GatherTopkLayout&, void*, Stream);
template Status GatherTopk<int64_t>(const void*, int, const int64_t*, const GatherTopkLayout&, void*, Stream);

}  // namespace opbridge::cuda
