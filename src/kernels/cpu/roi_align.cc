// RoIAlign CPU kernel.
//
// The arithmetic is torchvision's roi_align_forward_kernel_impl (itself Caffe2's RoIAlign):
// the same sample positions, the same clamping and the same accumulation order, so float32
// results match torchvision to the last bit or two. One task per RoI: for that RoI the four
// bilinear taps and weights of every sample are computed once and reused for every channel.
#include "kernels/cpu/roi_align.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace opbridge::cpu {
namespace {

// One bilinear sample: four offsets into a channel plane and their weights. A sample outside
// [-1, H] x [-1, W] has all weights 0 and offsets 0 (torchvision returns 0 for it).
struct BilinearTap {
  int64_t pos1, pos2, pos3, pos4;
  float w1, w2, w3, w4;
};

BilinearTap MakeTap(float y, float x, int64_t height, int64_t width) {
  if (y < -1.0f || y > static_cast<float>(height) || x < -1.0f || x > static_cast<float>(width)) {
    return {0, 0, 0, 0, 0.f, 0.f, 0.f, 0.f};
  }
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y_low = static_cast<int64_t>(y);
  int64_t x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<float>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<float>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const float ly = y - static_cast<float>(y_low);
  const float lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly;
  const float hx = 1.0f - lx;
  return {y_low * width + x_low, y_low * width + x_high, y_high * width + x_low,
          y_high * width + x_high, hy * hx,  hy * lx,    ly * hx,  ly * lx};
}

// Sampling grid of one RoI, in feature-map coordinates.
struct RoiGeometry {
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
  bool finite;
};

RoiGeometry MakeGeometry(const RoiAlignParams& p, const float* roi) {
  const float offset = p.aligned ? 0.5f : 0.0f;
  RoiGeometry g;
  g.start_w = roi[1] * p.spatial_scale - offset;
  g.start_h = roi[2] * p.spatial_scale - offset;
  const float end_w = roi[3] * p.spatial_scale - offset;
  const float end_h = roi[4] * p.spatial_scale - offset;
  float roi_w = end_w - g.start_w;
  float roi_h = end_h - g.start_h;
  if (!p.aligned) {  // legacy behaviour: force malformed RoIs to be 1x1
    roi_w = std::max(roi_w, 1.0f);
    roi_h = std::max(roi_h, 1.0f);
  }
  g.finite = std::isfinite(g.start_w) && std::isfinite(g.start_h) && std::isfinite(roi_w) &&
             std::isfinite(roi_h);
  g.bin_h = roi_h / static_cast<float>(p.output_height);
  g.bin_w = roi_w / static_cast<float>(p.output_width);
  if (!g.finite) {
    g.grid_h = g.grid_w = 0;
  } else if (p.sampling_ratio > 0) {
    g.grid_h = g.grid_w = p.sampling_ratio;
  } else {
    // ceil(roi / out) like torchvision; an empty or inverted aligned RoI gives a grid <= 0,
    // which takes no samples. Clamp before the integer conversion so huge boxes cannot overflow.
    const float limit = static_cast<float>(kRoiAlignMaxSamplesPerRoi);
    g.grid_h = static_cast<int64_t>(std::min(std::ceil(roi_h / p.output_height), limit));
    g.grid_w = static_cast<int64_t>(std::min(std::ceil(roi_w / p.output_width), limit));
  }
  return g;
}

}  // namespace

Status RoiAlign(const RoiAlignParams& p, const float* input, int64_t batch, int64_t channels,
                int64_t height, int64_t width, const float* rois, int64_t num_rois, float* output,
                const TaskRunner& runner) {
  (void)batch;
  const int64_t out_h = p.output_height, out_w = p.output_width;
  const int64_t plane = height * width;
  const int64_t bins = out_h * out_w;

  // Reject absurd adaptive grids before starting any work.
  for (int64_t r = 0; r < num_rois; ++r) {
    const RoiGeometry g = MakeGeometry(p, rois + r * 5);
    const int64_t gh = std::max<int64_t>(g.grid_h, 0), gw = std::max<int64_t>(g.grid_w, 0);
    if (gh > 0 && gw > 0 &&
        (gh > kRoiAlignMaxSamplesPerRoi / gw || gh * gw > kRoiAlignMaxSamplesPerRoi / bins)) {
      return Status::Error("roi ", r, " needs a ", gh, "x", gw,
                           " adaptive sampling grid per bin, more than the limit of ",
                           kRoiAlignMaxSamplesPerRoi,
                           " samples per roi; pass a positive sampling_ratio");
    }
  }

  return ParallelFor(runner, static_cast<size_t>(num_rois), [&](size_t task) {
    const int64_t r = static_cast<int64_t>(task);
    const float* roi = rois + r * 5;
    float* out = output + r * channels * bins;
    const RoiGeometry g = MakeGeometry(p, roi);
    if (!g.finite) {  // NaN or infinite box: the result is undefined, say so with NaN
      std::fill(out, out + channels * bins, std::numeric_limits<float>::quiet_NaN());
      return;
    }
    const int64_t grid_h = g.grid_h, grid_w = g.grid_w;
    const int64_t samples = (grid_h > 0 && grid_w > 0) ? grid_h * grid_w : 0;
    // torchvision divides by max(grid_h * grid_w, 1) computed on the signed grid sizes.
    const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));

    std::vector<BilinearTap> taps(static_cast<size_t>(bins * samples));
    size_t t = 0;
    for (int64_t ph = 0; ph < out_h; ++ph) {
      for (int64_t pw = 0; pw < out_w; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float y = g.start_h + ph * g.bin_h +
                          (static_cast<float>(iy) + 0.5f) * g.bin_h / static_cast<float>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float x = g.start_w + pw * g.bin_w +
                            (static_cast<float>(ix) + 0.5f) * g.bin_w / static_cast<float>(grid_w);
            taps[t++] = MakeTap(y, x, height, width);
          }
        }
      }
    }

    const int64_t batch_index = static_cast<int64_t>(roi[0]);
    for (int64_t c = 0; c < channels; ++c) {
      const float* in = input + (batch_index * channels + c) * plane;
      float* out_c = out + c * bins;
      for (int64_t bin = 0; bin < bins; ++bin) {
        const BilinearTap* tap = taps.data() + bin * samples;
        if (p.mode == RoiPoolMode::kAvg) {
          float sum = 0.0f;
          for (int64_t s = 0; s < samples; ++s) {
            const BilinearTap& k = tap[s];
            sum += k.w1 * in[k.pos1] + k.w2 * in[k.pos2] + k.w3 * in[k.pos3] + k.w4 * in[k.pos4];
          }
          out_c[bin] = sum / count;
        } else {
          // Max of the interpolated samples (mmcv's "max" mode). Unlike mmcv there is no
          // -10000 floor, NaN propagates like torch.max, and a bin without samples gives 0.
          float best = samples > 0 ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (int64_t s = 0; s < samples; ++s) {
            const BilinearTap& k = tap[s];
            const float v =
                k.w1 * in[k.pos1] + k.w2 * in[k.pos2] + k.w3 * in[k.pos3] + k.w4 * in[k.pos4];
            if (std::isnan(v)) {
              best = v;
              break;
            }
            if (v > best) best = v;
          }
          out_c[bin] = best;
        }
      }
    }
  });
}

}  // namespace opbridge::cpu
