// Scaled dot-product attention CUDA kernel. Framework-free: raw device pointers, sizes, a stream.
#pragma once

#include "core/scaled_dot_product_attention.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// cpu::ScaledDotProductAttention's outputs, bit for bit where the CPU has FMA (x86-64-v3 and v4:
// the same chains of fused multiply-adds, the same exp polynomial and 16-lane sums); q, k, v, mask
// (or null), out and attn in device memory, shaped as CheckAttentionShapes says.
Status ScaledDotProductAttention(const float* q, const float* k, const float* v, const float* mask,
                                 const AttentionSizes& sizes, float* out, float* attn, Stream stream);

}  // namespace opbridge::cuda
