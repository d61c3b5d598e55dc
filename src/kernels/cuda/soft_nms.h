// Soft-NMS CUDA kernel (float32): opbridge::SoftNonMaxSuppression and mmcv::SoftNonMaxSuppression.
// Framework-free: raw device pointers, params, device scratch and the stream.
//
// Exactly cpu::SoftNms's kept boxes, decayed scores and indices, in its order: the whole loop of
// picks runs in one thread block, each step's decays, drops, moves and next pick spread over its
// threads (kernels/shared/soft_nms_steps.h, whose per-box math the CPU kernel runs too). The number of
// kept boxes depends on the data: one copy of it to the host and a synchronization of the stream.
#pragma once

#include <stdint.h>

#include <functional>

#include "core/scratch.h"
#include "core/soft_nms.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// Allocates the outputs dets [kept, 5] and inds [kept] (device memory) once kept is known.
using AllocateSoftNmsOutputs = std::function<Status(int64_t kept, float** dets, int64_t** inds)>;

// The most boxes the kernel takes (positions are 32-bit; 32 bytes of state a box).
constexpr int64_t kSoftNmsMaxBoxes = int64_t{1} << 30;

// boxes [n, 4] (x1, y1, x2, y2), scores [n], in device memory.
Status SoftNms(const SoftNmsParams& params, const float* boxes, const float* scores, int64_t n,
               const AllocateSoftNmsOutputs& allocate, ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
