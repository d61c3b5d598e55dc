// Mask pasting CUDA kernel: one thread per output pixel (PasteMaskPixel of
// kernels/shared/paste_masks_pixel.h, which the CPU tests run too). Threads of a warp take
// consecutive pixels of one row, so they share the mask's placement and read neighbouring mask
// values; pixels outside the pasted rectangle write 0.
#include "kernels/cuda/paste_masks.h"

#include "kernels/cuda/launch.cuh"
#include "kernels/shared/paste_masks_pixel.h"

namespace opbridge::cuda {
namespace {

__global__ void PasteMasksKernel(const float* masks, int64_t mask_size, int64_t padding, float scale,
                                 const float* boxes, int64_t image_h, int64_t image_w, int64_t count, float* output) {
  OPBRIDGE_CUDA_FOR(index, count) {
    output[index] = shared::PasteMaskPixel(masks, mask_size, padding, scale, boxes, image_h, image_w, index);
  }
}

}  // namespace

Status PasteMasks(const float* masks, int64_t n, int64_t mask_size, const float* boxes, int64_t image_h,
                  int64_t image_w, int64_t padding, float* output, Stream stream) {
  const int64_t count = n * image_h * image_w;
  if (count == 0) return Status::Ok();
  PasteMasksKernel<<<BlocksFor(count), kThreads, 0, stream>>>(masks, mask_size, padding,
                                                              shared::PasteMaskScale(mask_size, padding), boxes,
                                                              image_h, image_w, count, output);
  return LaunchStatus("the mask pasting kernel");
}

}  // namespace opbridge::cuda
