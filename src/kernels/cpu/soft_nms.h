// Soft-NMS CPU kernel (float32). Framework-free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/soft_nms.h"
#include "core/status.h"

namespace opbridge::cpu {

// Bytes of scratch memory SoftNms needs for num_boxes boxes, rounded up to a multiple of 8 so
// that a caller may place int64 data right after it (36 bytes a box: odd counts end mid-word).
inline size_t SoftNmsScratchBytes(int64_t num_boxes) {
  const size_t bytes = static_cast<size_t>(num_boxes) * (7 * sizeof(float) + sizeof(int64_t));
  return (bytes + alignof(int64_t) - 1) / alignof(int64_t) * alignof(int64_t);
}

// boxes: [num_boxes, 4] (x1, y1, x2, y2); scores: [num_boxes]. Writes the kept boxes in
// selection order to dets [K, 5] (x1, y1, x2, y2, decayed score) and their original indices to
// inds [K], where dets and inds have room for num_boxes rows; returns K in *num_kept.
// scratch: SoftNmsScratchBytes(num_boxes) bytes, 8-byte aligned.
//
// Soft-NMS is sequential by nature (each pick depends on every earlier decay), so this kernel
// runs on one thread; its inner loops are written to vectorize.
void SoftNms(const SoftNmsParams& params, const float* boxes, const float* scores,
             int64_t num_boxes, void* scratch, float* dets, int64_t* inds, int64_t* num_kept);

}  // namespace opbridge::cpu
