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

inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace opbridge
