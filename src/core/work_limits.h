// Per-call work limits of the ops whose work a node's values or shapes can inflate without bound
// (the RoIAlign family, rotated feature align, deformable convolution), shared by every backend.
//
// The RoI ops already bound each RoI (2^20 sample rows and columns, 2^31 samples: CheckRoiSampleBudget),
// but a call multiplies that by its RoIs and channels: one rotated RoI 1e5 px wide with adaptive
// sampling ran 14 s on the CPU, and another input asked for an output of 2.1e9 floats (83 s, 9 GB).
// A server fed untrusted inputs must not stall on one request, so every call is bounded too, high
// enough that no real model meets the limits. The largest real workloads considered:
//   - outputs: rotated feature align or a deformable convolution on the stride-4 map of a 4K image
//     ([1, 256, 540, 960]: 1.3e8 elements); a Mask R-CNN's mask head on 1000 RoIs ([1000, 256, 28,
//     28]: 2.0e8); the limit, 2^30 (1.07e9), is 5 times the largest;
//   - samples x channels: a C4 detector (one stride-16 map, 1024 channels, 14 x 14 bins, adaptive
//     sampling) on a 4K image with 1000 RoIs each as large as the image (grids of 18 x 10 per bin):
//     3.6e10, far beyond what real proposals give (FPN models stay below 1e9); the limit, 2^36
//     (6.9e10), is twice that.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

constexpr int64_t kMaxCallOutputElements = int64_t{1} << 30;
constexpr int64_t kMaxCallSampleWork = int64_t{1} << 36;

// A RoI's samples as the work limit counts them: its bins times its grid's rows and columns (a grid
// of <= 0 rows or columns takes no sample). Host and device: the CUDA kernels count a call's RoIs on
// the device (their RoIs are in device memory) and refuse the whole call with NaN where the CPU ops
// report the error.
OPBRIDGE_HD inline int64_t RoiSamples(int64_t bins, int64_t grid_h, int64_t grid_w) {
  return bins * (grid_h > 0 ? grid_h : 0) * (grid_w > 0 ? grid_w : 0);
}
// Whether `samples` over `channels` channels exceed kMaxCallSampleWork.
OPBRIDGE_HD inline bool ExceedsCallWork(int64_t samples, int64_t channels) {
  return channels > 0 && samples > kMaxCallSampleWork / channels;
}

// Shape rule: the output `shape` holds at most kMaxCallOutputElements elements.
Status CheckCallOutputElements(const Shape& shape);

// The sampling work of one call, counted RoI by RoI as samples times channels: Add fails once the
// total would exceed kMaxCallSampleWork, before the RoIs that make it so are pooled.
class CallSampleWork {
 public:
  explicit CallSampleWork(int64_t channels) : channels_(channels) {}
  // One RoI's samples (its bins times its grid), or a group's.
  Status Add(int64_t samples);

 private:
  int64_t channels_;
  int64_t samples_ = 0;
};

}  // namespace opbridge
