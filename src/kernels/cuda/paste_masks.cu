// Mask pasting CUDA kernel, in two launches: each mask's placement (shared::PlaceMask, once per mask),
// then one thread per output pixel (shared::PasteMaskPixel; the CPU tests run both). Threads of a warp
// take consecutive pixels of one row, so they share the mask's placement and read neighbouring mask
// values; pixels outside the pasted rectangle write 0.
//
// Expected time, Mask R-CNN's 100 masks on an 800x800 image on an H100: the 256 MB output at
// 3 TB/s, about 85 us; the placement leaves each pixel 32-bit index math and, inside its box, two
// source taps and four reads.
#include "kernels/cuda/paste_masks.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/paste_masks_pixel.h"

namespace opbridge::cuda {
namespace {

template <class T>
__global__ void PlaceMasksKernel(const T* boxes, int64_t n, float scale, int64_t image_h, int64_t image_w,
                                 shared::PasteMaskPlacement* placements) {
  OPBRIDGE_CUDA_FOR(int64_t, m, n) { placements[m] = shared::PlaceMask(boxes + 4 * m, scale, image_h, image_w); }
}

template <class Index, class T>
__global__ void PasteMasksKernel(const T* masks, int64_t mask_size, int64_t padding,
                                 const shared::PasteMaskPlacement* placements, Index image_h, Index image_w,
                                 Index count, T* output) {
  OPBRIDGE_CUDA_FOR(Index, index, count) {
    shared::Store(output + index,
                  shared::PasteMaskPixel<Index>(masks, mask_size, padding, placements, image_h, image_w, index));
  }
}

}  // namespace

template <class T>
Status PasteMasks(const T* masks, int64_t n, int64_t mask_size, const T* boxes, int64_t image_h,
                  int64_t image_w, int64_t padding, T* output, ScratchAllocator& device_scratch, Stream stream) {
  ClearStaleError();
  const int64_t count = n * image_h * image_w;
  if (count == 0) return Status::Ok();
  const size_t bytes = ArenaBytes<shared::PasteMaskPlacement>(n);
  ScratchBlock block(device_scratch, bytes);
  if (block.data() == nullptr) return OutOfScratch(bytes);
  auto* placements = static_cast<shared::PasteMaskPlacement*>(block.data());
  PlaceMasksKernel<<<BlocksFor(n), kThreads, 0, stream>>>(boxes, n, shared::PasteMaskScale(mask_size, padding), image_h,
                                                          image_w, placements);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the mask placement kernel", stream));
  if (FitsInt32(count)) {
    PasteMasksKernel<int32_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(
        masks, mask_size, padding, placements, static_cast<int32_t>(image_h), static_cast<int32_t>(image_w),
        static_cast<int32_t>(count), output);
  } else {
    PasteMasksKernel<int64_t, T><<<BlocksFor(count), kThreads, 0, stream>>>(masks, mask_size, padding, placements,
                                                                        image_h, image_w, count, output);
  }
  return LaunchStatus("the mask pasting kernel", stream);
}

#define OPBRIDGE_PASTE_MASKS(T)                                                                             \
  template Status PasteMasks<T>(const T*, int64_t, int64_t, const T*, int64_t, int64_t, int64_t, T*, \
                                ScratchAllocator&, Stream);
OPBRIDGE_PASTE_MASKS(float)
OPBRIDGE_PASTE_MASKS(shared::Float16)
OPBRIDGE_PASTE_MASKS(shared::BFloat16)
#undef OPBRIDGE_PASTE_MASKS

}  // namespace opbridge::cuda
