// Scaled dot-product attention CPU kernel. Tasks are (batch, block of kBlock query rows). For a
// block, q / sqrt(E) is transposed to [E][kBlock] so that the scores of the block against a key
// are kBlock independent sums over e, vectorised across the rows (each sum runs in e order);
// the softmax is per row; out = attn v accumulates rows of v, vectorised over the contiguous
// embedding. Each output is written by one task, so results do not depend on threads.
#include "kernels/cpu/scaled_dot_product_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace opbridge::cpu {
namespace {

constexpr int64_t kBlock = 16;

}  // namespace

Status ScaledDotProductAttention(const float* q, const float* k, const float* v, const float* mask,
                                 const AttentionSizes& s, float* out, float* attn, const TaskRunner& runner) {
  const int64_t blocks = (s.queries + kBlock - 1) / kBlock;
  // PyTorch divides q by math.sqrt(E), a double, then rounds to float.
  const float root = static_cast<float>(std::sqrt(static_cast<double>(s.embed)));
  return ParallelFor(runner, static_cast<size_t>(s.batch * blocks), [&](size_t task) {
    const int64_t b = static_cast<int64_t>(task) / blocks;
    const int64_t i0 = (static_cast<int64_t>(task) % blocks) * kBlock;
    const int64_t rows = std::min(kBlock, s.queries - i0);
    std::vector<float> qt(static_cast<size_t>(s.embed * kBlock), 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      const float* qr = q + (b * s.queries + i0 + r) * s.embed;
      for (int64_t e = 0; e < s.embed; ++e) qt[e * kBlock + r] = qr[e] / root;
    }
    const float* kb = k + b * s.keys * s.embed;
    float* attn_block = attn + (b * s.queries + i0) * s.keys;
    // Scores, a key at a time for the block's rows.
    for (int64_t j = 0; j < s.keys; ++j) {
      const float* kr = kb + j * s.embed;
      float acc[kBlock] = {};
      for (int64_t e = 0; e < s.embed; ++e) {
        const float ke = kr[e];
        const float* qe = &qt[e * kBlock];
        for (int64_t r = 0; r < kBlock; ++r) acc[r] += qe[r] * ke;
      }
      for (int64_t r = 0; r < rows; ++r) attn_block[r * s.keys + j] = acc[r];
    }
    // Mask and softmax per row: exp(x - max) / sum, as torch's softmax.
    for (int64_t r = 0; r < rows; ++r) {
      float* row = attn_block + r * s.keys;
      if (mask != nullptr) {
        const float* m = mask + ((s.mask_batched ? b * s.queries : 0) + i0 + r) * s.keys;
        for (int64_t j = 0; j < s.keys; ++j) row[j] += m[j];
      }
      float max = -INFINITY;
      for (int64_t j = 0; j < s.keys; ++j) max = std::max(max, row[j]);
      // A NaN score makes the row NaN, as in torch (std::max above skips NaN: check apart).
      bool any_nan = false;
      for (int64_t j = 0; j < s.keys; ++j) any_nan |= std::isnan(row[j]);
      if (any_nan) max = NAN;
      float sum = 0.f;
      for (int64_t j = 0; j < s.keys; ++j) {
        row[j] = std::exp(row[j] - max);
        sum += row[j];
      }
      for (int64_t j = 0; j < s.keys; ++j) row[j] /= sum;
    }
    // out = attn v, rows of v accumulated in key order.
    const float* vb = v + b * s.keys * s.value;
    for (int64_t r = 0; r < rows; ++r) {
      const float* a = attn_block + r * s.keys;
      float* o = out + (b * s.queries + i0 + r) * s.value;
      std::fill(o, o + s.value, 0.f);
      for (int64_t j = 0; j < s.keys; ++j) {
        const float w = a[j];
        const float* vr = vb + j * s.value;
        for (int64_t e = 0; e < s.value; ++e) o[e] += w * vr[e];
      }
    }
  });
}

}  // namespace opbridge::cpu
