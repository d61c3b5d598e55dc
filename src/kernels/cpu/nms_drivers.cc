// The non-template parts of the NMS-family drivers (see nms_drivers.h).
#include "kernels/cpu/nms_drivers.h"

#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace opbridge::cpu {

#if defined(__SSE2__) || defined(__ARM_NEON)
namespace {
// Whether any of the 16 scores at p is > threshold (a NaN never is).
bool AnyOfSixteenAbove(const float* p, float threshold) {
#if defined(__SSE2__)
  const __m128 t = _mm_set1_ps(threshold);
  const __m128 a = _mm_cmpgt_ps(_mm_loadu_ps(p), t), b = _mm_cmpgt_ps(_mm_loadu_ps(p + 4), t);
  const __m128 c = _mm_cmpgt_ps(_mm_loadu_ps(p + 8), t), d = _mm_cmpgt_ps(_mm_loadu_ps(p + 12), t);
  return _mm_movemask_ps(_mm_or_ps(_mm_or_ps(a, b), _mm_or_ps(c, d))) != 0;
#else
  const float32x4_t t = vdupq_n_f32(threshold);
  const uint32x4_t a = vcgtq_f32(vld1q_f32(p), t), b = vcgtq_f32(vld1q_f32(p + 4), t);
  const uint32x4_t c = vcgtq_f32(vld1q_f32(p + 8), t), d = vcgtq_f32(vld1q_f32(p + 12), t);
  return vmaxvq_u32(vorrq_u32(vorrq_u32(a, b), vorrq_u32(c, d))) != 0;
#endif
}
}  // namespace
#endif

// Writes the positions and values of the scores > threshold (a NaN never is) and returns their
// count. Most scores of a multi-class problem are below the threshold, so blocks of 16 are
// compared at once (SSE on x86-64, NEON on aarch64: every CPU of either has them) and only blocks
// holding a candidate are walked one by one. Half scores are converted a block at a time, as the
// floats they are.
template <class T>
int64_t FilterAbove(const T* scores, int64_t n, float threshold, int32_t* positions, float* values) {
  int64_t count = 0;
  int64_t i = 0;
#if defined(__SSE2__) || defined(__ARM_NEON)
  float converted[16];
  for (; i + 16 <= n; i += 16) {
    const float* block = converted;
    if constexpr (std::is_same_v<T, float>) {
      block = scores + i;
    } else {
      shared::LoadRun(scores + i, 16, converted);
    }
    if (!AnyOfSixteenAbove(block, threshold)) continue;
    for (int64_t k = 0; k < 16; ++k) {
      if (block[k] > threshold) {
        positions[count] = static_cast<int32_t>(i + k);
        values[count++] = block[k];
      }
    }
  }
#endif
  for (; i < n; ++i) {
    const float score = shared::Load(scores + i);
    if (score > threshold) {
      positions[count] = static_cast<int32_t>(i);
      values[count++] = score;
    }
  }
  return count;
}

template int64_t FilterAbove<float>(const float*, int64_t, float, int32_t*, float*);
template int64_t FilterAbove<shared::Float16>(const shared::Float16*, int64_t, float, int32_t*, float*);
template int64_t FilterAbove<shared::BFloat16>(const shared::BFloat16*, int64_t, float, int32_t*, float*);

void GroupByCategory(const int64_t* categories, const int32_t* order, int64_t n, int32_t* grouped,
                     std::vector<int64_t>* run_starts) {
  int64_t lo = categories[0], hi = categories[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, categories[i]);
    hi = std::max(hi, categories[i]);
  }
  run_starts->clear();
  // Dense labels (the usual class ids): a counting sort. Computed in unsigned arithmetic, as
  // hi - lo may not fit an int64.
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (range < static_cast<uint64_t>(n) + 4096) {
    std::vector<int64_t> count(range + 2, 0);
    for (int64_t r = 0; r < n; ++r) ++count[static_cast<uint64_t>(categories[order[r]]) - static_cast<uint64_t>(lo) + 1];
    for (size_t c = 1; c < count.size(); ++c) count[c] += count[c - 1];
    for (size_t c = 0; c + 1 < count.size(); ++c) {
      if (count[c + 1] > count[c]) run_starts->push_back(count[c]);
    }
    for (int64_t r = 0; r < n; ++r) {
      grouped[count[static_cast<uint64_t>(categories[order[r]]) - static_cast<uint64_t>(lo)]++] = static_cast<int32_t>(r);
    }
  } else {
    std::vector<std::pair<int64_t, int32_t>> items(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) items[r] = {categories[order[r]], static_cast<int32_t>(r)};
    std::sort(items.begin(), items.end());
    for (int64_t r = 0; r < n; ++r) {
      grouped[r] = items[r].second;
      if (r == 0 || items[r].first != items[r - 1].first) run_starts->push_back(r);
    }
  }
  run_starts->push_back(n);
}

void WriteSelectedRows(const int32_t* kept_boxes, const int64_t* kept_counts, int64_t batch, int64_t classes,
                       int64_t cap, int64_t* rows) {
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t bc = b * classes + c;
      for (int64_t k = 0; k < kept_counts[bc]; ++k, ++row) {
        rows[3 * row + 0] = b;
        rows[3 * row + 1] = c;
        rows[3 * row + 2] = kept_boxes[bc * cap + k];
      }
    }
  }
}

void WriteMatchRows(const int32_t* pairs, const int64_t* pair_counts, int64_t batch, int64_t classes, int64_t n,
                    int64_t* rows) {
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t bc = b * classes + c;
      const int32_t* pair = pairs + 2 * bc * n;
      for (int64_t k = 0; k < pair_counts[bc]; ++k, ++row) {
        rows[4 * row + 0] = b;
        rows[4 * row + 1] = c;
        rows[4 * row + 2] = pair[2 * k];
        rows[4 * row + 3] = pair[2 * k + 1];
      }
    }
  }
}

}  // namespace opbridge::cpu
