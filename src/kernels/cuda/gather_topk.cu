// Gather of top-k rows CUDA kernel: one thread per output element, consecutive threads on
// consecutive elements of an output row and then the next row, so that the writes are coalesced and
// a warp reads whole source rows (the picks are scattered, their rows contiguous). Each thread wraps
// its row's index with GatherTopkSource; a thread that finds it out of range records the row's flat
// position with an atomicMin (only the first element's thread of the row, and only then: no atomic in
// the common case), and the launch function reads that slot back.
//
// Expected times on an H100 for the bench's cases (mmdet's post-processing, [2, 1000] picks of
// scores [2, 20000] or boxes [2, 20000, 4]): 2,000 to 8,000 elements, one wave; the launch (some
// 3-5 us) and the wait for the 8-byte copy back (some 10 us) dominate. The longest chain is one
// element: an index load, then a data load.
#include "kernels/cuda/gather_topk.h"

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {
namespace {

template <class Word, class Index, class Offset>
__global__ void GatherTopkKernel(const Word* data, const Index* indices, Offset picks, Offset candidates, Offset row,
                                 Offset count, Word* output, unsigned long long* first_bad) {
  OPBRIDGE_CUDA_FOR(Offset, e, count) {
    const Offset r = e / row, c = e - r * row;
    const int64_t source = GatherTopkSource(static_cast<int64_t>(indices[r]), static_cast<int64_t>(candidates));
    if (source < 0) {
      if (c == 0) atomicMin(first_bad, static_cast<unsigned long long>(r));
      continue;
    }
    output[e] = data[((r / picks) * candidates + static_cast<Offset>(source)) * row + c];
  }
}

template <class Word, class Index>
Status Launch(const void* data, const Index* indices, const GatherTopkLayout& layout, void* output,
              unsigned long long* first_bad, Stream stream) {
  const int64_t count = layout.batch * layout.picks * layout.row;
  const auto* from = static_cast<const Word*>(data);
  auto* to = static_cast<Word*>(output);
  if (FitsInt32(count) && FitsInt32(layout.batch * layout.candidates * layout.row)) {
    GatherTopkKernel<Word, Index, int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        from, indices, static_cast<int32_t>(layout.picks), static_cast<int32_t>(layout.candidates),
        static_cast<int32_t>(layout.row), static_cast<int32_t>(count), to, first_bad);
  } else {
    GatherTopkKernel<Word, Index, int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(
        from, indices, layout.picks, layout.candidates, layout.row, count, to, first_bad);
  }
  return LaunchStatus("the GatherTopk kernel", stream);
}

}  // namespace

template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, int64_t* first_bad, ScratchAllocator& scratch, Stream stream) {
  ClearStaleError();
  *first_bad = -1;
  if (layout.batch * layout.picks * layout.row == 0) return Status::Ok();
  if (element_bytes != 4 && element_bytes != 8) {
    return Status::Error("GatherTopk copies 4- or 8-byte elements, got ", element_bytes, " bytes");
  }
  ScratchBlock slot(scratch, sizeof(unsigned long long));
  if (slot.data() == nullptr) return OutOfScratch(sizeof(unsigned long long));
  auto* device_bad = static_cast<unsigned long long*>(slot.data());
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(device_bad, 0xff, sizeof(unsigned long long), stream),
                                     "clearing the GatherTopk index check"));
  if (element_bytes == 4) {
    OPBRIDGE_RETURN_IF_ERROR(Launch<uint32_t>(data, indices, layout, output, device_bad, stream));
  } else {
    OPBRIDGE_RETURN_IF_ERROR(Launch<uint64_t>(data, indices, layout, output, device_bad, stream));
  }
  unsigned long long bad = 0;
  OPBRIDGE_RETURN_IF_ERROR(CopyToHost(&bad, device_bad, sizeof(bad), stream, "copying the GatherTopk index check to the host"));
  if (bad != ~0ull) *first_bad = static_cast<int64_t>(bad);
  return Status::Ok();
}

template Status GatherTopk<int32_t>(const void*, int, const int32_t*, const GatherTopkLayout&, void*, int64_t*,
                                    ScratchAllocator&, Stream);
template Status GatherTopk<int64_t>(const void*, int, const int64_t*, const GatherTopkLayout&, void*, int64_t*,
                                    ScratchAllocator&, Stream);

}  // namespace opbridge::cuda
