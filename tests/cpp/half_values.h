// Half storage in the kernel tests: values stored as T (float, Float16 or BFloat16; rounded once), and
// stored values read back as floats.
#pragma once

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

}  // namespace opbridge::testing
