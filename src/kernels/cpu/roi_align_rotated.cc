// RoIAlignRotated CPU kernel.
//
// The arithmetic is mmcv's roi_align_rotated CPU kernel (detectron2's ROIAlignRotated), operation
// for operation in float32: per bin, a grid_h x grid_w grid of points at
//   yy = -h/2 + ph * bin_h + (iy + 0.5) * bin_h / grid_h   (and xx likewise)
// in the box's frame, rotated by theta about the centre:
//   y = yy * cos(theta) - xx * sin(theta) + cy,   x = yy * sin(theta) + xx * cos(theta) + cx;
// a point outside [-1, H] x [-1, W] adds nothing, otherwise it is clamped to the map and
// interpolated between its four neighbours; the bin is the sum over its points divided by
// max(grid_h * grid_w, 1).
//
// Rotation makes the sampling non-separable, so unlike RoIAlign every point keeps its own four
// neighbours and weights. They depend on the RoI alone: the points of a group of RoIs are
// prepared once (in parallel, one task per RoI), then pooled for every channel:
//   blocked (the group reads each pixel several times, the usual case): one task per block of 32
//     channels copies them interleaved pixel-major, so that each neighbour is 32 contiguous
//     floats and one multiply-add serves 32 channels; the points are read once per block;
//   planar (few points per pixel, where interleaving would cost more than it saves): one task per
//     channel reads its plane in place.
// Per channel both compute mmcv's sum in mmcv's order, so they agree bit for bit (tested). A RoI
// with more points than the group budget (an absurd adaptive grid) is not prepared; its points
// are computed as they are pooled, with the same functions.
#include "kernels/cpu/roi_align_rotated.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "core/roi_align.h"
#include "kernels/cpu/bilinear_taps.h"
#include "kernels/shared/roi_align_rotated_grid.h"

namespace opbridge::cpu {
namespace {

using shared::MakeRotatedGeometry;
using shared::MakeRotatedTaps;
using shared::RotatedGeometry;

// A RoI of a group: its geometry and, when prepared, where its taps start in the group's array.
struct GroupRoi {
  RotatedGeometry geometry;
  int64_t batch_index;
  bool prepared;
  size_t taps;
};

// RoIs are prepared in groups of at most this many sample points (8 MB of taps).
constexpr size_t kGroupSampleBudget = size_t{1} << 18;

// Pools one RoI from one channel plane, from its prepared taps.
void PoolPrepared(const RoiAlignRotatedParams& p, const GroupRoi& r, const BilinearTaps* taps, int64_t width,
                  const float* in, float* out) {
  const int64_t samples_per_bin = r.geometry.grid_h * r.geometry.grid_w;
  for (int64_t bin = 0; bin < p.output_height * p.output_width; ++bin) {
    float sum = 0.0f;
    for (int64_t s = 0; s < samples_per_bin; ++s, ++taps) {
      if (taps->base != kTapsOutside) sum += BilinearSample(*taps, in, width);
    }
    out[bin] = sum / r.geometry.count;
  }
}

// Pools one RoI from one channel plane, computing its taps as it goes.
void PoolStreamed(const RoiAlignRotatedParams& p, const GroupRoi& r, int64_t height, int64_t width, const float* in,
                  float* out) {
  const RotatedGeometry& g = r.geometry;
  for (int64_t ph = 0; ph < p.output_height; ++ph) {
    for (int64_t pw = 0; pw < p.output_width; ++pw) {
      float sum = 0.0f;
      for (int64_t iy = 0; iy < g.grid_h; ++iy) {
        for (int64_t ix = 0; ix < g.grid_w; ++ix) {
          const BilinearTaps t = MakeRotatedTaps(g, ph, pw, iy, ix, height, width);
          if (t.base != kTapsOutside) sum += BilinearSample(t, in, width);
        }
      }
      out[ph * p.output_width + pw] = sum / g.count;
    }
  }
}

// Channels pooled together by the blocked path: a block's planes are interleaved pixel-major
// ([pixel][lane]), so that one sample's four neighbours are four runs of kLanes contiguous floats
// and every multiply-add serves kLanes channels (vectorised), where the planar path gathers one
// float per neighbour.
constexpr int64_t kLanes = 32;

// Pools one RoI from a block of kLanes interleaved channels, from its prepared taps, into
// sums [bins][kLanes]. Every lane computes exactly what PoolPrepared computes for its channel.
void PoolPreparedBlock(const RoiAlignRotatedParams& p, const GroupRoi& r, const BilinearTaps* taps, int64_t width,
                       const float* block, float* sums) {
  const int64_t samples_per_bin = r.geometry.grid_h * r.geometry.grid_w;
  for (int64_t bin = 0; bin < p.output_height * p.output_width; ++bin) {
    float acc[kLanes] = {};
    for (int64_t s = 0; s < samples_per_bin; ++s, ++taps) {
      const BilinearTaps& t = *taps;
      if (t.base == kTapsOutside) continue;
      const float* low = block + t.base * kLanes;
      const float* high = low + t.dy * width * kLanes;
      const int64_t dx = t.dx * kLanes;
      for (int64_t k = 0; k < kLanes; ++k) {
        acc[k] += t.w[0] * low[k] + t.w[1] * low[dx + k] + t.w[2] * high[k] + t.w[3] * high[dx + k];
      }
    }
    for (int64_t k = 0; k < kLanes; ++k) sums[bin * kLanes + k] = acc[k] / r.geometry.count;
  }
}

// Copies channels [c0, c0 + lanes) of image `b` into `block` pixel-major, padding to kLanes.
void InterleaveChannels(const float* input, int64_t b, int64_t channels, int64_t c0, int64_t lanes, int64_t plane,
                        float* block) {
  for (int64_t k = 0; k < kLanes; ++k) {
    if (k < lanes) {
      const float* in = input + (b * channels + c0 + k) * plane;
      for (int64_t i = 0; i < plane; ++i) block[i * kLanes + k] = in[i];
    } else {
      for (int64_t i = 0; i < plane; ++i) block[i * kLanes + k] = 0.0f;
    }
  }
}

}  // namespace

Status RoiAlignRotated(const RoiAlignRotatedParams& p, const float* input, int64_t batch, int64_t channels,
                       int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                       ScratchAllocator& scratch, const TaskRunner& runner, const int64_t* output_rows, CallSampleWork* work) {
  (void)batch;  // the batch indices were checked against it by the caller
  const int64_t out_h = p.output_height, out_w = p.output_width;
  const int64_t plane = height * width;
  const int64_t bins = out_h * out_w;

  // Reject absurd grids before starting any work: RoIAlign's per-RoI sample limits, and the call's
  // work limit (a multi-level caller passes the call's count, which its levels add to).
  CallSampleWork own_work(channels);
  CallSampleWork& call_work = work != nullptr ? *work : own_work;
  for (int64_t r = 0; r < num_rois; ++r) {
    const RotatedGeometry g = MakeRotatedGeometry(p, rois + r * 6);
    OPBRIDGE_RETURN_IF_ERROR(CheckRoiSampleBudget(output_rows ? output_rows[r] : r, g.grid_h, g.grid_w, out_h, out_w));
    OPBRIDGE_RETURN_IF_ERROR(call_work.Add(RoiSamples(bins, g.grid_h, g.grid_w)));
  }

  std::vector<GroupRoi> group;
  ReusedScratchBlock taps_block(scratch);
  for (int64_t first = 0; first < num_rois;) {
    // Prepare a group of RoIs: their sample points are shared by all channels.
    group.clear();
    int64_t last = first;
    size_t num_taps = 0;
    while (last < num_rois && (last == first || num_taps < kGroupSampleBudget)) {
      const float* roi = rois + last * 6;
      GroupRoi r;
      r.geometry = MakeRotatedGeometry(p, roi);
      r.batch_index = static_cast<int64_t>(roi[0]);
      const size_t samples = static_cast<size_t>(bins * r.geometry.grid_h * r.geometry.grid_w);
      r.prepared = samples <= kGroupSampleBudget;
      r.taps = num_taps;
      if (r.prepared) num_taps += samples;
      group.push_back(r);
      ++last;
    }
    // Their sample points, one task per RoI.
    auto* taps = static_cast<BilinearTaps*>(taps_block.Reserve(num_taps * sizeof(BilinearTaps)));
    if (taps == nullptr) return Status::Error("could not allocate ", num_taps * sizeof(BilinearTaps), " bytes of scratch memory");
    OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, group.size(), [&](size_t k) {
      const GroupRoi& r = group[k];
      if (!r.prepared) return;
      const RotatedGeometry& g = r.geometry;
      BilinearTaps* t = taps + r.taps;
      for (int64_t ph = 0; ph < out_h; ++ph) {
        for (int64_t pw = 0; pw < out_w; ++pw) {
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            for (int64_t ix = 0; ix < g.grid_w; ++ix) *t++ = MakeRotatedTaps(g, ph, pw, iy, ix, height, width);
          }
        }
      }
    }));
    // Pooling. The blocked path pays for interleaving the images the group reads, once per block
    // of channels; it wins when the group reads each pixel several times.
    // The images the group reads, sorted (at most one per RoI: never an array over the batch,
    // which may be huge); image k's block starts at k * plane * kLanes in a task's buffer.
    std::vector<int64_t> images_read;
    for (const GroupRoi& r : group) {
      if (r.geometry.finite) images_read.push_back(r.batch_index);
    }
    std::sort(images_read.begin(), images_read.end());
    images_read.erase(std::unique(images_read.begin(), images_read.end()), images_read.end());
    const int64_t images = static_cast<int64_t>(images_read.size());
    const auto image_slot = [&](int64_t b) {
      return (std::lower_bound(images_read.begin(), images_read.end(), b) - images_read.begin()) * plane * kLanes;
    };
    const bool blocked = channels > 1 && 4 * static_cast<int64_t>(num_taps) >= images * plane;
    const auto pool_roi_channel = [&](const GroupRoi& r, int64_t row, int64_t c) {
      float* out = output + (row * channels + c) * bins;
      if (!r.geometry.finite) {  // NaN or infinite box: the result is undefined, say so with NaN
        std::fill(out, out + bins, std::numeric_limits<float>::quiet_NaN());
        return;
      }
      const float* in = input + (r.batch_index * channels + c) * plane;
      if (r.prepared) {
        PoolPrepared(p, r, taps + r.taps, width, in, out);
      } else {
        PoolStreamed(p, r, height, width, in, out);
      }
    };
    if (!blocked) {
      // One task per channel: it pools every RoI of the group from that channel's plane.
      OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(channels), [&](size_t task) {
        for (size_t k = 0; k < group.size(); ++k) {
          const int64_t index = first + static_cast<int64_t>(k);
          pool_roi_channel(group[k], output_rows ? output_rows[index] : index, static_cast<int64_t>(task));
        }
      }));
    } else {
      // One task per block of kLanes channels: it interleaves them, then pools every RoI.
      const int64_t num_blocks = (channels + kLanes - 1) / kLanes;
      OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(num_blocks), [&](size_t task) {
        const int64_t c0 = static_cast<int64_t>(task) * kLanes, lanes = std::min(kLanes, channels - c0);
        // From the scratch allocator (ORT's arena reuses it across calls), not the heap: a fresh
        // 2 MB heap block per task per call is a fresh mmap, whose page faults cost more than the
        // interleaving itself.
        ScratchBlock interleaved_block(scratch, static_cast<size_t>(images * plane * kLanes) * sizeof(float));
        if (interleaved_block.data() == nullptr) throw std::bad_alloc();  // ParallelFor reports it
        float* interleaved = static_cast<float*>(interleaved_block.data());
        for (int64_t b : images_read) InterleaveChannels(input, b, channels, c0, lanes, plane, interleaved + image_slot(b));
        std::vector<float> sums(static_cast<size_t>(bins * kLanes));
        for (size_t k = 0; k < group.size(); ++k) {
          const GroupRoi& r = group[k];
          const int64_t index = first + static_cast<int64_t>(k);
          const int64_t row = output_rows ? output_rows[index] : index;
          if (!r.geometry.finite || !r.prepared) {
            for (int64_t c = c0; c < c0 + lanes; ++c) pool_roi_channel(r, row, c);
            continue;
          }
          PoolPreparedBlock(p, r, taps + r.taps, width, interleaved + image_slot(r.batch_index), sums.data());
          for (int64_t lane = 0; lane < lanes; ++lane) {
            float* out = output + (row * channels + c0 + lane) * bins;
            for (int64_t bin = 0; bin < bins; ++bin) out[bin] = sums[bin * kLanes + lane];
          }
        }
      }));
    }
    first = last;
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
