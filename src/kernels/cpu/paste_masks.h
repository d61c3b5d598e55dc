// Mask R-CNN mask pasting CPU kernel (float32). Framework-free.
//
// Reproduces torchvision 0.29.1's
//   torchvision.models.detection.roi_heads.paste_masks_in_image(masks, boxes, (image_h, image_w), padding)
// bit for bit with PyTorch 2.14.1's CPU F.interpolate as its AVX2 / AVX-512 builds compute it
// (what PyTorch runs on any x86-64 CPU with AVX2), whatever CPU runs this kernel: the fused
// multiply-adds of those builds are written as explicit std::fma (see interpolate.h; on a CPU
// without AVX2 PyTorch itself computes unfused values, which differ in the last bits).
//
// What torchvision computes, per mask:
//   1. expand_masks: pad the mask_size x mask_size mask with `padding` zeros on each side
//      (side S = mask_size + 2 * padding); scale = float(S / mask_size) (the Python double
//      rounded to float32, as PyTorch does when it multiplies a float32 tensor by it).
//   2. expand_boxes, in float32: w_half = (x2 - x1) * 0.5 * scale, x_c = (x2 + x1) * 0.5, and
//      the box (x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half); then .to(int64), which
//      truncates toward zero, giving integer pixels b0, b1, b2, b3 (inclusive corners).
//   3. paste_mask_in_image: resize the whole padded mask with bilinear F.interpolate
//      (align_corners=False) to h x w = max(b3 - b1 + 1, 1) x max(b2 - b0 + 1, 1) and copy the
//      part inside the image to rows [max(b1, 0), min(b3 + 1, image_h)) and columns
//      [max(b0, 0), min(b2 + 1, image_w)); zeros elsewhere.
// PyTorch's bilinear kernel depends on the output size: the channels-last kernel when
// h + w <= 128, the generic one above; they sum the four taps in different orders, and both are
// reproduced.
//
// The resized mask can be far larger than the image (torchvision resizes to the whole box);
// this kernel computes only the pixels that land inside the image, with the same index and
// weight arithmetic as the full resize, so the values are identical.
//
// Boxes torchvision cannot handle. In every case where torchvision returns a result, this kernel
// returns the same one; the cases below are where it does not, and what this kernel does:
//   - A box that does not overlap the image pastes nothing (a zero plane). torchvision's Python
//     slicing wraps negative ends there: it either also pastes nothing or raises a shape
//     mismatch (e.g. a box starting beyond the right edge). Boxes from a detector are clipped
//     to the image, so this does not happen in practice.
//   - An expanded coordinate that is NaN, infinite or of magnitude >= 2^62 pastes nothing. The
//     int64 conversion is undefined in C++ there (|v| >= 2^63; x86 gives INT64_MIN, which with
//     torchvision's slicing happens to paste nothing for NaN and infinite boxes), and between
//     2^62 and 2^63 torchvision's int64 width b2 - b0 + 1 can overflow. Below 2^62 every step
//     is computed exactly, including box sizes torchvision could not allocate.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/paste_masks.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// masks: [n, 1, mask_size, mask_size]; boxes: [n, 4] (x1, y1, x2, y2) in image pixels;
// output: [n, 1, image_h, image_w]. padding >= 0 (torchvision's default is 1).
// T is the storage type of masks, boxes and output (float, shared::Float16 or shared::BFloat16):
// the float32 kernel's outputs on the stored values, each rounded once as it is written.
template <class T>
Status PasteMasks(const T* masks, int64_t n, int64_t mask_size, const T* boxes, int64_t image_h,
                  int64_t image_w, int64_t padding, T* output, ScratchAllocator& scratch,
                  const TaskRunner& runner);

}  // namespace opbridge::cpu
