#include "core/scaled_dot_product_attention.h"

namespace opbridge {

Status CheckAttentionShapes(const Shape& q, const Shape& k, const Shape& v, bool has_mask, const Shape& mask,
                            AttentionSizes* sizes) {
  if (q.size() != 3) return Status::Error("q must have rank 3 [B, Nt, E], got shape ", ShapeToString(q));
  if (k.size() != 3) return Status::Error("k must have rank 3 [B, Ns, E], got shape ", ShapeToString(k));
  if (v.size() != 3) return Status::Error("v must have rank 3 [B, Ns, Ev], got shape ", ShapeToString(v));
  if (k[0] != q[0] || k[2] != q[2]) {
    return Status::Error("k must be [B, Ns, E] with q's B and E, got q ", ShapeToString(q), " and k ",
                         ShapeToString(k));
  }
  if (v[0] != q[0] || v[1] != k[1]) {
    return Status::Error("v must be [B, Ns, Ev] with q's B and k's Ns, got q ", ShapeToString(q), ", k ",
                         ShapeToString(k), " and v ", ShapeToString(v));
  }
  AttentionSizes s{q[0], q[1], k[1], q[2], v[2], false};
  if (has_mask) {
    const bool shared = mask.size() == 2 && mask[0] == s.queries && mask[1] == s.keys;
    const bool batched = mask.size() == 3 && mask[0] == s.batch && mask[1] == s.queries && mask[2] == s.keys;
    if (!shared && !batched) {
      return Status::Error("mask must be [Nt, Ns] = [", s.queries, ", ", s.keys, "] or [B, Nt, Ns] = [", s.batch,
                           ", ", s.queries, ", ", s.keys, "], got shape ", ShapeToString(mask));
    }
    s.mask_batched = batched;
  }
  int64_t count = 0;
  if (!CheckedNumElements({s.batch, s.queries, s.keys}, &count) ||
      !CheckedNumElements({s.batch, s.queries, s.value}, &count)) {
    return Status::Error("the outputs have more than 2^63 - 1 elements");
  }
  *sizes = s;
  return Status::Ok();
}

}  // namespace opbridge
