// core/half_storage.h: every float16 and bfloat16 read back exactly; the rounding of
// float32 to each at every rounding boundary (each pair of neighbouring values' midpoint and the
// floats next to it: ties to even), against a reference that picks the nearest value by
// comparison in double; and float16 against the hardware's own conversion (x86's F16C, aarch64's
// __fp16) on a sweep of every 127th float32 bit pattern.
#include "core/half_storage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace opbridge {
namespace {

using shared::BFloat16;
using shared::Float16;
constexpr auto Bits = shared::FloatBits;
constexpr auto FromBits = shared::FloatFromBits;

// The float16's value from its fields, in double.
double Float16Value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, fraction = h & 0x3FF;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1F) return fraction == 0 ? sign * INFINITY : NAN;
  if (exponent == 0) return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024 + fraction, exponent - 25);
}

TEST(HalfStorage, EveryFloat16ReadsAsItsValue) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float v = shared::ToFloat(Float16{static_cast<uint16_t>(h)});
    const double expected = Float16Value(static_cast<uint16_t>(h));
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(v)) << std::hex << h;
      ASSERT_EQ(Bits(v) >> 31, h >> 15) << std::hex << h;
      ASSERT_EQ((Bits(v) >> 13) & 0x3FF, h & 0x3FF) << "the payload is kept: " << std::hex << h;
      ASSERT_EQ(shared::ToFloat16(v).bits, (h & 0x8000) | 0x7E00) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(v), expected) << std::hex << h;
      ASSERT_EQ(std::signbit(v), (h & 0x8000) != 0) << std::hex << h;
      ASSERT_EQ(shared::ToFloat16(v).bits, h) << "round trip of " << std::hex << h;
    }
  }
}

TEST(HalfStorage, EveryBFloat16ReadsAsItsValue) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float v = shared::ToFloat(BFloat16{static_cast<uint16_t>(b)});
    ASSERT_EQ(Bits(v), b << 16) << std::hex << b;
    const bool nan = (b & 0x7FFF) > 0x7F80;
    ASSERT_EQ(shared::ToBFloat16(v).bits, nan ? 0x7FC0 : b) << std::hex << b;
  }
}

// float16's codes and values of one sign, and the reference rounding by comparison.
struct Float16Table {
  std::vector<double> values;  // codes 0 .. 0x7BFF
  Float16Table() {
    for (uint32_t h = 0; h <= 0x7BFF; ++h) values.push_back(Float16Value(static_cast<uint16_t>(h)));
  }
  // The code nearest x >= 0 (ties to even), 0x7C00 (infinity) from 65,520 on.
  uint16_t Nearest(double x) const {
    if (x >= 65520.0) return 0x7C00;
    size_t low = 0, high = values.size() - 1;  // values[low] <= x < values[high] narrowed by bisection
    if (x >= values[high]) return static_cast<uint16_t>(high);
    while (high - low > 1) {
      const size_t mid = (low + high) / 2;
      (values[mid] <= x ? low : high) = mid;
    }
    const double below = x - values[low], above = values[high] - x;
    if (below < above) return static_cast<uint16_t>(low);
    if (above < below) return static_cast<uint16_t>(high);
    return static_cast<uint16_t>(low % 2 == 0 ? low : high);
  }
};

// The floats at and around every rounding boundary of a 16-bit format of one sign: each value, the
// midpoint between it and the next (a float: a 16-bit format has at most 11 significant bits) and
// the floats next to both.
template <class ValueOf>
std::vector<float> BoundaryFloats(uint32_t last_code, ValueOf value_of) {
  std::vector<float> floats;
  for (uint32_t code = 0; code <= last_code; ++code) {
    const double value = value_of(code), next = value_of(code + 1);
    for (double point : {value, (value + next) / 2}) {
      const float f = static_cast<float>(point);
      EXPECT_EQ(static_cast<double>(f), point) << "not a float: " << point;
      floats.push_back(f);
      floats.push_back(std::nextafter(f, INFINITY));
      if (f > 0.0f) floats.push_back(std::nextafter(f, 0.0f));
    }
  }
  return floats;
}

TEST(HalfStorage, Float16RoundsToNearestEvenAtEveryBoundary) {
  const Float16Table table;
  // Code 0x7BFF's successor is 65,536 (infinity's place): its midpoint 65,520 is the overflow edge.
  const std::vector<float> floats =
      BoundaryFloats(0x7BFF, [](uint32_t code) { return code == 0x7C00 ? 65536.0 : Float16Value(code); });
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> any;
  std::vector<float> all = floats;
  for (int i = 0; i < 1000000; ++i) all.push_back(std::fabs(FromBits(any(rng) & 0x477FFFFFu)));
  for (float f : {0.0f, 1e-30f, 1.4e-45f, 65519.996f, 65520.0f, 65536.0f, 1e10f, 3.4028235e38f, INFINITY}) {
    all.push_back(f);
  }
  for (float f : all) {
    if (std::isnan(f)) continue;
    const uint16_t expected = table.Nearest(static_cast<double>(f));
    ASSERT_EQ(shared::ToFloat16(f).bits, expected) << f << " (bits " << std::hex << Bits(f) << ")";
    ASSERT_EQ(shared::ToFloat16(-f).bits, expected | 0x8000) << -f;
  }
  EXPECT_EQ(shared::ToFloat16(NAN).bits, 0x7E00);
  EXPECT_EQ(shared::ToFloat16(-NAN).bits, 0xFE00);
  EXPECT_EQ(shared::ToFloat16(FromBits(0x7F800001u)).bits, 0x7E00) << "a signalling NaN stays a NaN";
}

TEST(HalfStorage, BFloat16RoundsToNearestEvenAtEveryBoundary) {
  // A bfloat16 code's value is the float of its bits << 16; the float past the largest finite one
  // (0x7F7F) is 2^128, and the overflow edge is their midpoint.
  const auto value_of = [](uint32_t code) {
    return code == 0x7F80 ? std::ldexp(1.0, 128) : static_cast<double>(FromBits(code << 16));
  };
  const std::vector<float> floats = BoundaryFloats(0x7F7F, value_of);
  for (float f : floats) {
    const double x = f;
    const uint32_t low = Bits(f) >> 16;  // the code at or below f (f >= 0)
    const double below = x - value_of(low), above = value_of(low + 1) - x;
    const uint32_t expected = below < above ? low : above < below ? low + 1 : (low % 2 == 0 ? low : low + 1);
    ASSERT_EQ(shared::ToBFloat16(f).bits, expected) << f;
    ASSERT_EQ(shared::ToBFloat16(-f).bits, expected | 0x8000) << -f;
  }
  EXPECT_EQ(shared::ToBFloat16(FromBits(0x7F7FFFFFu)).bits, 0x7F80) << "past the overflow edge: infinity";
  EXPECT_EQ(shared::ToBFloat16(INFINITY).bits, 0x7F80);
  EXPECT_EQ(shared::ToBFloat16(-NAN).bits, 0x7FC0);
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t HardwareFloat16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
bool HasHardwareFloat16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c");
}
#elif defined(__aarch64__)
uint16_t HardwareFloat16(float f) {
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
bool HasHardwareFloat16() { return true; }
#endif

TEST(HalfStorage, Float16AgreesWithTheHardwaresConversion) {
#if defined(__x86_64__) || defined(__aarch64__)
  if (!HasHardwareFloat16()) GTEST_SKIP() << "this CPU has no float16 conversion instruction (F16C)";
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 127) {
    const float f = FromBits(static_cast<uint32_t>(bits));
    const uint16_t ours = shared::ToFloat16(f).bits, hardware = HardwareFloat16(f);
    if (std::isnan(f)) {  // the hardware keeps the payload; both are NaN of f's sign
      ASSERT_EQ(ours & 0xFC00, hardware & 0xFC00) << std::hex << bits;
      ASSERT_NE(hardware & 0x3FF, 0) << std::hex << bits;
    } else {
      ASSERT_EQ(ours, hardware) << f << " (bits " << std::hex << bits << ")";
    }
  }
#else
  GTEST_SKIP() << "no float16 conversion instruction known on this architecture";
#endif
}

}  // namespace
}  // namespace opbridge
