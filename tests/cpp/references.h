// Plain reference computations that several kernel tests compare with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace opbridge::testing {

// torch.sort(descending=True, stable=True) of scores[0 .. n) written plainly: NaN first,
// -0 == +0, ties by position.
inline std::vector<int32_t> TorchSortOrder(const float* scores, int64_t n) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const float x = scores[a], y = scores[b];
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
    return x > y;
  });
  return order;
}

// The bits of a float, for bit-for-bit comparisons.
inline uint32_t Bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

}  // namespace opbridge::testing
