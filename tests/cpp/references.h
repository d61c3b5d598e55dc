// Plain reference computations that several kernel tests compare with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu/cpu_level.h"

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

// The CUDA kernels of the products (attention, deformable convolution) against their CPU twins,
// as the host runs their arithmetic: on a CPU with FMA (x86-64-v3 or v4, aarch64), where the CPU
// kernels fuse every multiply-add as the GPU does, the same bits; on an x86-64-v2 CPU, whose kernels
// round each product, the same NaN places and infinities and the other values within `tolerance`
// relative.
inline void ExpectGpuArithmeticMatchesCpu(const std::vector<float>& cpu, const std::vector<float>& device,
                                          float tolerance, const char* what) {
  ASSERT_EQ(cpu.size(), device.size()) << what;
  if (cpu::CpuKernelsFuseMultiplyAdds()) {
    EXPECT_EQ(0, std::memcmp(cpu.data(), device.data(), cpu.size() * sizeof(float))) << what;
    return;
  }
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!std::isfinite(cpu[i])) {
      EXPECT_TRUE(std::isnan(cpu[i]) ? std::isnan(device[i]) : device[i] == cpu[i]) << what << " " << i;
    } else {
      EXPECT_NEAR(device[i], cpu[i], tolerance * (1.0f + std::fabs(cpu[i]))) << what << " " << i;
    }
  }
}

}  // namespace opbridge::testing
