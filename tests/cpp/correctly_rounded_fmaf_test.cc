// CorrectlyRoundedFmaf against the CPU's FMA instruction (where it has one) on random bit patterns
// (every class of float: subnormals, infinities, NaN) and on near-cancelling triples (c close to
// -a * b, where rounding the product first differs most); and the C library's fmaf as this program
// links it (glibc's on Linux, mingw_fmaf.cc's on Windows) against the same.
#include "kernels/cpu/correctly_rounded_fmaf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

namespace opbridge {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Equal bits, or both NaN (the NaN's payload is the hardware's choice).
bool Same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || Bits(x) == Bits(y); }

#if defined(__x86_64__)
__attribute__((target("fma"))) float HardwareFma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
bool HasHardwareFma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma");
}
#else  // aarch64: fused multiply-add is in the base instruction set
float HardwareFma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
bool HasHardwareFma() { return true; }
#endif

template <class F>
void ForTriples(F check) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any;
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 120);
  for (int i = 0; i < 1000000; ++i) check(FromBits(any(rng)), FromBits(any(rng)), FromBits(any(rng)));
  for (int i = 0; i < 1000000; ++i) {
    const float a = std::ldexp(unit(rng), exponent(rng) / 2), b = std::ldexp(unit(rng), exponent(rng) / 2);
    const float product = a * b;  // rounded: c = -product leaves the product's rounding error
    const float nudge = std::ldexp(unit(rng), exponent(rng));
    check(a, b, -product);
    check(a, b, -product + nudge * std::fabs(product) * 1e-6f);
    check(a, b, nudge);
  }
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 3.4028235e38f, -3.4028235e38f,
                            1.1754944e-38f, 1.4e-45f, -1.4e-45f, 0.5f, 3.0f};
  for (float a : specials)
    for (float b : specials)
      for (float c : specials) check(a, b, c);
}

TEST(CorrectlyRoundedFmaf, GivesTheHardwareFmaBits) {
  if (!HasHardwareFma()) GTEST_SKIP() << "this CPU has no FMA instruction to compare with";
  int64_t differ = 0;
  ForTriples([&](float a, float b, float c) {
    if (!Same(cpu::CorrectlyRoundedFmaf(a, b, c), HardwareFma(a, b, c)) && differ++ < 5) {
      ADD_FAILURE() << a << " * " << b << " + " << c << ": " << cpu::CorrectlyRoundedFmaf(a, b, c) << " vs "
                    << HardwareFma(a, b, c);
    }
  });
  EXPECT_EQ(differ, 0);
}

// The fmaf the kernels' baseline code calls, as this program is linked.
TEST(CorrectlyRoundedFmaf, TheLinkedFmafIsCorrectlyRounded) {
  int64_t differ = 0;
  ForTriples([&](float a, float b, float c) {
    volatile float va = a, vb = b, vc = c;  // a call, not folded or expanded to the instruction
    const float got = std::fma(static_cast<float>(va), static_cast<float>(vb), static_cast<float>(vc));
    if (!Same(got, cpu::CorrectlyRoundedFmaf(a, b, c)) && differ++ < 5) {
      ADD_FAILURE() << a << " * " << b << " + " << c << ": fmaf gives " << got;
    }
  });
  EXPECT_EQ(differ, 0);
}

}  // namespace
}  // namespace opbridge
