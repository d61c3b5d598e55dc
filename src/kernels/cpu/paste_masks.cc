// Mask R-CNN mask pasting CPU kernel. The semantics, and the boxes torchvision cannot handle,
// are described in paste_masks.h; the interpolation arithmetic in interpolate.h.
//
// Work layout: one task per band of about kTaskPixels output pixels (whole rows) of one mask's
// plane, so that a single large image still spreads over threads. A task zeroes its rows outside
// the pasted rectangle and computes the rectangle's pixels in them. Every output element is
// written by exactly one task, and each value is computed independently of the others, so results
// do not depend on the thread count.
#include "kernels/cpu/paste_masks.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/interpolate.h"
#include "kernels/shared/paste_masks_pixel.h"

namespace opbridge::cpu {
namespace {

constexpr int64_t kTaskPixels = int64_t{1} << 16;

// The horizontal taps of the pasted columns, as arrays (indices into a padded-mask row).
struct ColumnTaps {
  int32_t *i0, *i1;
  float *l0, *l1;
};

// One output row of the pasted part: interpolate along the row on source rows r0 and r1, then
// between them, as PyTorch's kernel for the output's size does. Its generic bilinear kernel (output
// h + w > 128): each step `a * b + c * d` fused by PyTorch's FMA builds as fma(a, b, c * d). Its
// channels-last kernel (h + w <= 128; with one channel it runs its scalar tail): four combined
// weights lh * lw, then v00*w00 + v01*w01 + v10*w10 + v11*w11 as
// fma(v11, w11, fma(v10, w10, fma(v00, w00, v01*w01))).
// Compiled for x86-64-v3 too, where std::fma is one instruction instead of a libm call; the
// results are identical.
template <bool kChannelsLast>
struct PasteRowBody {
  static constexpr const char* kName =
      kChannelsLast ? "PasteMasks: PasteRowChannelsLast" : "PasteMasks: PasteRowGeneric";
  OPBRIDGE_ALWAYS_INLINE static void Run(const float* r0, const float* r1, float lh0, float lh1, ColumnTaps cols,
                                         int64_t count, float* out) {
    for (int64_t x = 0; x < count; ++x) {
      const float l0 = cols.l0[x], l1 = cols.l1[x];
      const int32_t i0 = cols.i0[x], i1 = cols.i1[x];
      out[x] = kChannelsLast ? shared::BilinearChannelsLast(r0[i0], r0[i1], r1[i0], r1[i1], lh0, lh1, l0, l1)
                             : shared::BilinearGeneric(r0[i0], r0[i1], r1[i0], r1[i1], lh0, lh1, l0, l1);
    }
  }
};

}  // namespace

template <class T>
Status PasteMasks(const T* masks, int64_t n, int64_t mask_size, const T* boxes, int64_t image_h,
                  int64_t image_w, int64_t padding, T* output, ScratchAllocator& scratch,
                  const TaskRunner& runner) {
  constexpr bool kFloat = std::is_same_v<T, float>;
  constexpr T kZero{};  // +0 in every storage type
  if (n < 0 || image_h < 0 || image_w < 0) {
    return Status::Error("negative size: n=", n, ", image_h=", image_h, ", image_w=", image_w);
  }
  if (mask_size < 1 || mask_size > kPasteMasksMaxPaddedSide) {
    return Status::Error("mask_size must be in [1, ", kPasteMasksMaxPaddedSide, "], got ", mask_size);
  }
  const int64_t max_padding = (kPasteMasksMaxPaddedSide - mask_size) / 2;
  if (padding < 0 || padding > max_padding) {
    return Status::Error("padding must be in [0, ", max_padding, "] so that mask_size + 2 * padding <= ",
                         kPasteMasksMaxPaddedSide, " (mask_size ", mask_size, "), got ", padding);
  }
  if (n == 0 || image_h == 0 || image_w == 0) return Status::Ok();

  const int64_t side = mask_size + 2 * padding;  // the padded mask
  const float scale = shared::PasteMaskScale(mask_size, padding);
  const int64_t rows_per_task = std::max<int64_t>(1, kTaskPixels / image_w);
  const int64_t bands = (image_h + rows_per_task - 1) / rows_per_task;
  const int64_t plane = image_h * image_w;

  std::atomic<bool> out_of_memory{false};
  OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(n * bands), [&](size_t task) {
    const int64_t m = static_cast<int64_t>(task) / bands;
    const int64_t row_begin = static_cast<int64_t>(task) % bands * rows_per_task;
    const int64_t row_end = std::min(image_h, row_begin + rows_per_task);
    T* out = output + m * plane;
    const shared::PasteMaskPlacement p = shared::PlaceMask(boxes + 4 * m, scale, image_h, image_w);
    // The band's pasted rows [lo, hi); the other rows are zero.
    const int64_t lo = p.pastes ? std::clamp(p.y_begin, row_begin, row_end) : row_end;
    const int64_t hi = p.pastes ? std::clamp(p.y_end, lo, row_end) : row_end;
    std::fill(out + row_begin * image_w, out + lo * image_w, kZero);
    std::fill(out + hi * image_w, out + row_end * image_w, kZero);
    if (lo == hi) return;

    const int64_t width = p.x_end - p.x_begin;
    // Half storage: the pasted part of a row is computed in float32 into `values`, then rounded.
    const int64_t value_count = kFloat ? 0 : width;
    const size_t bytes = ArenaBytes<float>(side * side) + 2 * ArenaBytes<int32_t>(width) +
                         2 * ArenaBytes<float>(width) + ArenaBytes<float>(value_count);
    ScratchBlock block(scratch, bytes);
    if (block.data() == nullptr) {
      out_of_memory = true;
      std::fill(out + lo * image_w, out + hi * image_w, kZero);
      return;
    }
    Arena arena(block.data(), bytes);
    // expand_masks: the mask with `padding` zeros on every side, in float32 (a half mask converted
    // as it is copied).
    float* padded = arena.Take<float>(side * side);
    const T* mask = masks + m * mask_size * mask_size;
    std::fill(padded, padded + side * side, 0.0f);
    for (int64_t y = 0; y < mask_size; ++y) {
      shared::LoadRun(mask + y * mask_size, mask_size, padded + (y + padding) * side + padding);
    }
    // Horizontal taps of the pasted columns: resized column x - left of an out_w-wide resize.
    ColumnTaps cols{arena.Take<int32_t>(width), arena.Take<int32_t>(width), arena.Take<float>(width),
                    arena.Take<float>(width)};
    const float scale_w = InterpolateScale(side, p.out_w);
    for (int64_t x = 0; x < width; ++x) {
      const LinearTap t = LinearSourceTap(scale_w, p.x_begin + x - p.left, side, p.out_w);
      cols.i0[x] = static_cast<int32_t>(t.i0);
      cols.i1[x] = static_cast<int32_t>(t.i1);
      cols.l0[x] = t.l0;
      cols.l1[x] = t.l1;
    }
    // PyTorch's kernel choice for a one-channel float image: channels-last when h + w <= 128.
    const bool channels_last_kernel = shared::BilinearUsesChannelsLast(p.out_h, p.out_w);
    const float scale_h = InterpolateScale(side, p.out_h);
    float* values = arena.Take<float>(value_count);
    for (int64_t y = lo; y < hi; ++y) {
      T* row = out + y * image_w;
      const LinearTap t = LinearSourceTap(scale_h, y - p.top, side, p.out_h);
      const float* r0 = padded + t.i0 * side;
      const float* r1 = padded + t.i1 * side;
      std::fill(row, row + p.x_begin, kZero);
      float* pasted = nullptr;
      if constexpr (kFloat) {
        pasted = row + p.x_begin;
      } else {
        pasted = values;
      }
      if (channels_last_kernel) {
        RunAtCpuLevel<3, PasteRowBody<true>>(r0, r1, t.l0, t.l1, cols, width, pasted);
      } else {
        RunAtCpuLevel<3, PasteRowBody<false>>(r0, r1, t.l0, t.l1, cols, width, pasted);
      }
      if constexpr (!kFloat) {
        shared::StoreRun(values, width, row + p.x_begin);
      }
      std::fill(row + p.x_end, row + image_w, kZero);
    }
  }));
  if (out_of_memory) return Status::Error("could not allocate scratch memory for a ", side, "x", side, " padded mask");
  return Status::Ok();
}

#define OPBRIDGE_PASTE_MASKS(T)                                                                             \
  template Status PasteMasks<T>(const T*, int64_t, int64_t, const T*, int64_t, int64_t, int64_t, T*, \
                                ScratchAllocator&, const TaskRunner&);
OPBRIDGE_PASTE_MASKS(float)
OPBRIDGE_PASTE_MASKS(shared::Float16)
OPBRIDGE_PASTE_MASKS(shared::BFloat16)
#undef OPBRIDGE_PASTE_MASKS

}  // namespace opbridge::cpu
