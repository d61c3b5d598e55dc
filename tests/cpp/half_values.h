// Half storage in the kernel tests: values stored as T (float, Float16 or BFloat16; rounded once), and
// stored values read back as floats.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/half_storage.h"

namespace opbridge::testing {

template <class T>
std::vector<T> StoredAs(const std::vector<float>& values) {
  std::vector<T> stored(values.size());
  for (size_t i = 0; i < values.size(); ++i) shared::Store(&stored[i], values[i]);
  return stored;
}

template <class T>
std::vector<float> FloatsOf(const std::vector<T>& stored) {
  std::vector<float> values(stored.size());
  for (size_t i = 0; i < stored.size(); ++i) values[i] = shared::Load(&stored[i]);
  return values;
}

// A half-storage kernel's outputs `got` are the float32 kernel's `float32` rounded once, and every
// vector of `same_bits` (the device code's outputs, a threaded run) holds the same bits; `context`
// names the case in a failure.
template <class T>
void ExpectFloat32RoundedOnce(const std::vector<T>& got, const std::vector<float>& float32,
                              const std::vector<const std::vector<T>*>& same_bits, const std::string& context = "") {
  ASSERT_EQ(got.size(), float32.size()) << context;
  for (size_t k = 0; k < got.size(); ++k) {
    T once;
    shared::Store(&once, float32[k]);
    ASSERT_EQ(got[k].bits, once.bits) << context << ": element " << k;
    for (const std::vector<T>* other : same_bits) ASSERT_EQ(got[k].bits, (*other)[k].bits) << context << ": element " << k;
  }
}

}  // namespace opbridge::testing
