// Keypoint R-CNN heatmap decoding CPU kernel (float32). Framework-free.
//
// Reproduces torchvision 0.29.1's
//   torchvision.models.detection.roi_heads.heatmaps_to_keypoints(maps, rois)
// bit for bit with PyTorch 2.14.1's CPU F.interpolate as its AVX2 / AVX-512 builds compute it
// (what PyTorch runs on any x86-64 CPU with AVX2), whatever CPU runs this kernel: the fused
// multiply-adds of those builds are written as explicit std::fma (see interpolate.h; on a CPU
// without AVX2 PyTorch itself computes unfused values, which differ in the last bits and can
// move the argmax).
//
// What torchvision computes, per roi (x1, y1, x2, y2), all in float32:
//   width = max(x2 - x1, 1), height = max(y2 - y1, 1) (torch.clamp, which keeps NaN);
//   the resized map size W = int(ceil(width)), H = int(ceil(height));
//   width_correction = width / W, height_correction = height / H (float divisions);
//   per keypoint: the map resized to H x W with bicubic F.interpolate (align_corners=False);
//   pos = argmax of the resized map in row-major order (torch.argmax: the first maximum, and a
//   NaN counts as the maximum, so the first NaN if there is one); x_int = pos % W, y_int = pos / W;
//   x = (float(x_int) + 0.5) * width_correction + x1, y likewise with y1; score = the resized
//   map's value at pos (a logit, not a probability).
// torchvision returns xy_preds.permute(0, 2, 1), i.e. [r, k, 3] rows (x, y, 1), and scores [r, k].
//
// The resized map is never stored: it is computed a band of columns at a time, row by row, and
// the argmax taken as it goes (see the .cc); the values are the same as the full resize's.
//
// Limits and rois torchvision cannot handle:
//   - A roi whose resized map would have more than kKeypointsMaxMapSamples samples (H * W; the
//     longest side accepted is therefore 2^26 px, for a roi 1 px high) is an error naming the roi
//     and the rule, returned before any work. The work per keypoint is proportional to H * W;
//     torchvision would allocate 4 * k * H * W bytes for it (4.5 GB for 17 keypoints at the
//     limit, 8192 x 8192). Keypoint R-CNN's rois are in the network's input image, at most
//     1333 px a side with torchvision's default transform.
//   - A roi whose width or height is not finite (NaN, or an infinite or overflowing x2 - x1)
//     gives NaN x, y and score (visibility still 1), since there is no map size to resize to;
//     torchvision raises there (int() of NaN or infinity). Infinite coordinates with a finite
//     width (e.g. x2 - x1 = -inf, clamped to 1) are computed like torchvision (x is then
//     infinite).
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/shared/heatmap_keypoint.h"

namespace opbridge::cpu {

// The most samples (H * W) a roi's resized map may have: 2^26 (e.g. 8192 x 8192).
constexpr int64_t kKeypointsMaxMapSamples = shared::kKeypointsMaxMapSamples;

// maps: [r, k, map_h, map_w] (keypoint logits; torchvision's are 56 x 56); rois: [r, 4]
// (x1, y1, x2, y2). Writes xy: [r, k, 3] = (x, y, 1) and scores: [r, k].
Status HeatmapsToKeypoints(const float* maps, int64_t r, int64_t k, int64_t map_h, int64_t map_w, const float* rois,
                           float* xy, float* scores, ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
