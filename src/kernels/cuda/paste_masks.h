// Mask R-CNN mask pasting CUDA kernel (float32, float16 or bfloat16 storage with float32
// arithmetic). Framework-free.
#pragma once

#include <stdint.h>

#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// masks [n, 1, mask_size, mask_size] and boxes [n, 4] in device memory; output [n, 1, image_h,
// image_w]: cpu::PasteMasks's values bit for bit (kernels/shared/paste_masks_pixel.h), one thread
// per output pixel; a placement per mask (about 72 bytes) in `device_scratch`. The sizes are the CPU
// kernel's, already checked. T is the storage type of masks, boxes and output.
template <class T>
Status PasteMasks(const T* masks, int64_t n, int64_t mask_size, const T* boxes, int64_t image_h,
                  int64_t image_w, int64_t padding, T* output, ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
