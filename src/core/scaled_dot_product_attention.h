// Scaled dot-product attention (mmdeploy's ScaledDotProductAttentionTRT, the TensorRT rewrite of
// torch's F._scaled_dot_product_attention): shape rules shared by every backend.
// See docs/ops/scaled_dot_product_attention.md.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct AttentionSizes {
  int64_t batch = 0;    // B
  int64_t queries = 0;  // Nt
  int64_t keys = 0;     // Ns
  int64_t embed = 0;    // E (q and k)
  int64_t value = 0;    // E of v (PyTorch allows it to differ from q's)
  bool mask_batched = false;  // mask [B, Nt, Ns] (else [Nt, Ns], shared by the batch)
};

// Shape rules: q [B, Nt, E], k [B, Ns, E], v [B, Ns, Ev]; the optional mask (has_mask) [Nt, Ns]
// or [B, Nt, Ns]. Outputs: out [B, Nt, Ev], attn [B, Nt, Ns].
Status CheckAttentionShapes(const Shape& q, const Shape& k, const Shape& v, bool has_mask, const Shape& mask,
                            AttentionSizes* sizes);

}  // namespace opbridge
