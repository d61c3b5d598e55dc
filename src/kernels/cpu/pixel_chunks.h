// The work layout of kernels that sample every channel plane of an image at positions that
// depend on the image and the output pixel only (the grid sampler, rotated feature align).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/parallel.h"
#include "core/status.h"

namespace opbridge::cpu {

struct PixelChunks {
  int64_t chunk_pixels;  // output pixels whose taps are prepared at a time (sizes the tap scratch)
  int64_t tap_block;     // pixels per task preparing taps
  int64_t run_pixels;    // pixels per task sampling one channel
};

// Per image n and chunk of `pixels` output pixels: first prepare(n, chunk, begin, end) computes
// the taps of pixels chunk + [begin, end), once for all channels, in tasks of sizes.tap_block
// pixels; then apply(n, c, chunk, begin, end) samples channel c at those taps, one task per
// channel and run of sizes.run_pixels pixels, so that a task reads one channel plane, which stays
// in cache while the taps stream by. Offsets begin and end are relative to the chunk. Every pixel
// of every channel is one task's, so kernels that write only their task's outputs give the same
// results for any thread count.
template <class Prepare, class Apply>
Status ForEachPixelChunk(const TaskRunner& runner, int64_t batch, int64_t channels, int64_t pixels,
                         const PixelChunks& sizes, Prepare&& prepare, Apply&& apply) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t chunk = 0; chunk < pixels; chunk += sizes.chunk_pixels) {
      const int64_t len = std::min(sizes.chunk_pixels, pixels - chunk);
      OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, NumChunks(len, sizes.tap_block), [&](size_t task) {
        const int64_t begin = static_cast<int64_t>(task) * sizes.tap_block;
        prepare(n, chunk, begin, std::min(len, begin + sizes.tap_block));
      }));
      const int64_t runs = static_cast<int64_t>(NumChunks(len, sizes.run_pixels));
      OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(channels * runs), [&](size_t task) {
        const int64_t c = static_cast<int64_t>(task) / runs;
        const int64_t begin = (static_cast<int64_t>(task) % runs) * sizes.run_pixels;
        apply(n, c, chunk, begin, std::min(len, begin + sizes.run_pixels));
      }));
    }
  }
  return Status::Ok();
}

}  // namespace opbridge::cpu
