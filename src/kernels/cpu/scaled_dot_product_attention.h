// Scaled dot-product attention CPU kernel. Framework-free: raw pointers and sizes.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/scaled_dot_product_attention.h"
#include "core/scratch.h"
#include "core/status.h"

namespace opbridge::cpu {

// attn = softmax((q / sqrt(E)) k^T + mask) along the last dim (max-subtracted), out = attn v,
// in float32 as mmdeploy's PyTorch forward computes it, the products with PackedGemm. mask may be
// null. Scratch: packed copies of k and v (about their size) and a few rows per task.
Status ScaledDotProductAttention(const float* q, const float* k, const float* v, const float* mask,
                                 const AttentionSizes& sizes, float* out, float* attn, ScratchAllocator& scratch,
                                 const TaskRunner& runner);

namespace detail {

// The softmax step: attn[r] = softmax(scores[r] + mask[r]) for `count` rows of `keys` (mask may
// be null; scores, rows scores_stride >= keys apart, are overwritten). One variant per x86-64 level this CPU runs, best first (for
// tests: v3 and v4 give the same bits, v2 differs in the exp's last bit); returns the count.
using AttentionSoftmax = void (*)(float* scores, int64_t count, int64_t keys, int64_t scores_stride, const float* mask,
                                  float* attn);
int AttentionSoftmaxVariants(AttentionSoftmax* variants, int capacity);

}  // namespace detail

}  // namespace opbridge::cpu
