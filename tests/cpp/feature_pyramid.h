// A random feature pyramid for the multi-level RoI kernel tests: `count` maps of 96 x 80, 48 x 40,
// ... (each level halves the sides), normal values from a fixed seed.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel

namespace opbridge::testing {

struct Pyramid {
  std::vector<std::vector<float>> maps;
  std::vector<cpu::FeatureLevel> levels;
};

inline Pyramid MakePyramid(size_t count, int64_t batch, int64_t channels, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Pyramid p;
  for (size_t l = 0; l < count; ++l) {
    const int64_t h = 96 >> l, w = 80 >> l;
    p.maps.emplace_back(batch * channels * h * w);
    for (auto& v : p.maps.back()) v = normal(rng);
  }
  for (size_t l = 0; l < count; ++l) p.levels.push_back({p.maps[l].data(), 96 >> l, 80 >> l});
  return p;
}

}  // namespace opbridge::testing
