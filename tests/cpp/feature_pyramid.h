// A random feature pyramid for the multi-level RoI kernel tests: `count` maps of 96 x 80, 48 x 40,
// ... (each level halves the sides), normal values from a fixed seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/multi_scale_roi_align.h"  // FeatureLevel
#include "half_values.h"
#include "kernels/shared/roi_align_levels.h"

namespace opbridge::testing {

using cpu::FeatureLevel;

struct Pyramid {
  std::vector<std::vector<float>> maps;
  std::vector<cpu::FeatureLevel<float>> levels;
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

// The multi-level RoIAlign CUDA kernel's code, run on the host: per launch (shared::kMaxFeatureMaps
// maps each, as the CUDA glue makes them) the RoIs' plans, then every output element. Elements no launch
// writes keep -1. T is the storage type of the maps, the RoIs and the output.
template <class T>
std::vector<T> RunLeveledRoiAlignDeviceCode(const RoiAlignParams& p, const std::vector<FeatureLevel<T>>& levels,
                                            const std::vector<float>& scales, const shared::RoiLeveling& leveling,
                                            int64_t batch, int64_t channels, const std::vector<T>& rois) {
  const int64_t num_rois = static_cast<int64_t>(rois.size() / 5), total = static_cast<int64_t>(levels.size());
  T minus_one;
  shared::Store(&minus_one, -1.0f);
  std::vector<T> out(static_cast<size_t>(num_rois * channels * p.output_height * p.output_width), minus_one);
  std::vector<const T*> data;
  std::vector<int64_t> heights, widths;
  for (const FeatureLevel<T>& l : levels) {
    data.push_back(l.data);
    heights.push_back(l.height);
    widths.push_back(l.width);
  }
  for (int64_t first = 0; first < total; first += shared::kMaxFeatureMaps) {
    const shared::FeatureMaps<T> maps =
        shared::FeatureMapsFrom(first, total, data.data(), heights.data(), widths.data(), scales.data());
    std::vector<shared::RoiPlan> plans;  // the plan kernel: a thread per RoI
    for (int64_t r = 0; r < num_rois; ++r) {
      plans.push_back(shared::MakeLeveledRoiPlan(p, maps, leveling, batch, rois.data() + 5 * r));
    }
    for (int32_t i = 0; i < static_cast<int32_t>(out.size()); ++i) {  // the element kernel, 32-bit indices
      shared::LeveledRoiAlignElement<int32_t>(p, plans.data(), maps, channels, i, out.data());
    }
  }
  return out;
}

// A pyramid's maps stored as T, and the same values as floats (the float32 kernel's inputs).
template <class T>
struct StoredPyramid {
  std::vector<std::vector<T>> maps;
  std::vector<cpu::FeatureLevel<T>> levels;
  Pyramid rounded;
};
template <class T>
StoredPyramid<T> StorePyramid(const Pyramid& pyramid) {
  StoredPyramid<T> s;
  for (const auto& map : pyramid.maps) {
    s.maps.push_back(StoredAs<T>(map));
    s.rounded.maps.push_back(FloatsOf(s.maps.back()));
  }
  for (size_t l = 0; l < pyramid.levels.size(); ++l) {
    s.levels.push_back({s.maps[l].data(), pyramid.levels[l].height, pyramid.levels[l].width});
    s.rounded.levels.push_back({s.rounded.maps[l].data(), pyramid.levels[l].height, pyramid.levels[l].width});
  }
  return s;
}

// a == b, NaN equal to NaN; or, with a relative tolerance, |a - b| <= tol * (1 + |a|).
inline bool SameValue(float a, float b, float tol = 0.0f) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b || std::fabs(a - b) <= tol * (1.0f + std::fabs(a));
}

}  // namespace opbridge::testing
