// Mask pasting per output pixel, host-and-device: where torchvision's paste_masks_in_image puts a
// mask (expand_boxes, the int64 box, the resize size) and the value of one pasted pixel. The CPU
// kernel (kernels/cpu/paste_masks.cc, which computes rows at a time) and the CUDA kernel (one
// thread per pixel) both use these; see kernels/cpu/paste_masks.h for the semantics.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/half_storage.h"
#include "core/host_device.h"
#include "kernels/shared/interpolate.h"

namespace opbridge::shared {

// Where one mask lands: the integer box, the size torchvision resizes the padded mask to, and the
// part of the resized mask inside the image.
struct PasteMaskPlacement {
  bool pastes;                             // false: the plane stays zero
  int64_t left, top;                       // b0, b1: image position of resized pixel (0, 0)
  int64_t out_w, out_h;                    // the resize's output size
  int64_t x_begin, x_end, y_begin, y_end;  // image pixels written, end exclusive
};

// Magnitude from which an expanded coordinate pastes nothing (see kernels/cpu/paste_masks.h):
// below it the int64 box and b2 - b0 + 1 are exact.
constexpr float kMaxPasteBoxCoordinate = 0x1p62f;

// expand_masks' scale, float(side) / mask_size in double, rounded to float32 when expand_boxes
// multiplies the float32 box by it (the traced path's float32 division gives the same value: a
// quotient rounded to double and then to float is correctly rounded).
inline float PasteMaskScale(int64_t mask_size, int64_t padding) {
  return static_cast<float>(static_cast<double>(mask_size + 2 * padding) / static_cast<double>(mask_size));
}

// expand_boxes with `scale` (float(side / mask_size)), in float32 in torchvision's order. The box is
// stored as R (float, Float16 or BFloat16) and read as the floats it holds.
template <class R>
OPBRIDGE_HD inline PasteMaskPlacement PlaceMask(const R* stored_box, float scale, int64_t image_h, int64_t image_w) {
  PasteMaskPlacement p{};
  p.pastes = false;
  float box[4];  // half boxes as the floats they are
  for (int i = 0; i < 4; ++i) box[i] = Load(stored_box + i);
  float w_half = (box[2] - box[0]) * 0.5f;
  float h_half = (box[3] - box[1]) * 0.5f;
  const float x_c = (box[2] + box[0]) * 0.5f;
  const float y_c = (box[3] + box[1]) * 0.5f;
  w_half = w_half * scale;
  h_half = h_half * scale;
  const float expanded[4] = {x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half};
  int64_t b[4];
  for (int i = 0; i < 4; ++i) {
    if (!(fabsf(expanded[i]) < kMaxPasteBoxCoordinate)) return p;  // NaN, infinite or huge
    b[i] = static_cast<int64_t>(expanded[i]);                        // .to(int64): toward zero
  }
  p.left = b[0];
  p.top = b[1];
  p.out_w = Max<int64_t>(b[2] - b[0] + 1, 1);
  p.out_h = Max<int64_t>(b[3] - b[1] + 1, 1);
  p.x_begin = Max<int64_t>(b[0], 0);
  p.x_end = Min<int64_t>(b[2] + 1, image_w);
  p.y_begin = Max<int64_t>(b[1], 0);
  p.y_end = Min<int64_t>(b[3] + 1, image_h);
  p.pastes = p.x_begin < p.x_end && p.y_begin < p.y_end;
  return p;
}

// Output element `index` of [n, 1, image_h, image_w]: pixel (y, x) of mask m pasted at its
// placement (PlaceMask, which the CUDA kernel computes once per mask), or 0. masks [n, 1, mask_size,
// mask_size]; the padded mask is read with its zero border in place. Index: the kernel's index type
// (int32_t where the pixel count allows). T: the masks' storage type (float, Float16 or BFloat16),
// read as the floats they hold; the value is float32, for the caller to store.
template <class Index, class T>
OPBRIDGE_HD inline float PasteMaskPixel(const T* masks, int64_t mask_size, int64_t padding,
                                        const PasteMaskPlacement* placements, Index image_h, Index image_w,
                                        Index index) {
  const Index row = index / image_w;  // m * image_h + y
  const Index m = row / image_h, y = row - m * image_h, x = index - row * image_w;
  const PasteMaskPlacement& p = placements[m];
  if (!p.pastes || y < p.y_begin || y >= p.y_end || x < p.x_begin || x >= p.x_end) return 0.0f;
  const int64_t side = mask_size + 2 * padding;
  const LinearTap ty = LinearSourceTap(InterpolateScale(side, p.out_h), y - p.top, side, p.out_h);
  const LinearTap tx = LinearSourceTap(InterpolateScale(side, p.out_w), x - p.left, side, p.out_w);
  const T* mask = masks + static_cast<int64_t>(m) * mask_size * mask_size;
  const auto padded = [&](int64_t row, int64_t column) {
    const int64_t r = row - padding, c = column - padding;
    return r >= 0 && r < mask_size && c >= 0 && c < mask_size ? Load(mask + r * mask_size + c) : 0.0f;
  };
  const float v00 = padded(ty.i0, tx.i0), v01 = padded(ty.i0, tx.i1);
  const float v10 = padded(ty.i1, tx.i0), v11 = padded(ty.i1, tx.i1);
  return BilinearUsesChannelsLast(p.out_h, p.out_w) ? BilinearChannelsLast(v00, v01, v10, v11, ty.l0, ty.l1, tx.l0, tx.l1)
                                                     : BilinearGeneric(v00, v01, v10, v11, ty.l0, ty.l1, tx.l0, tx.l1);
}

}  // namespace opbridge::shared
