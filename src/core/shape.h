// opbridge: tensor shapes as plain vectors, and their printing for error messages.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace opbridge {

using Shape = std::vector<int64_t>;

inline std::string ShapeToString(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

// The element count of a shape whose dims are >= 0, or false when it overflows int64.
inline bool CheckedNumElements(const Shape& shape, int64_t* count) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  *count = n;
  return true;
}

inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The position of element `flat` (0 <= flat < NumElements(shape)) of a row-major tensor, last
// dim fastest: for error messages naming an element ("indices[1, 7]").
inline Shape UnravelIndex(int64_t flat, const Shape& shape) {
  Shape position(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    position[d] = flat % shape[d];
    flat /= shape[d];
  }
  return position;
}

}  // namespace opbridge
