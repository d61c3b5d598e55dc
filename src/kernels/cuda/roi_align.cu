// RoIAlign CUDA kernel: a thread block per (RoI, tile of kRoiTileChannels channels), one launch.
// The block's first thread plans the RoI (shared::MakeRoiPlan: its sampling grid and image, or a NaN
// row), its threads compute the RoI's sample-row and sample-column taps once into shared memory
// (shared::RoiRowTap / RoiColumnTap: a division and a few comparisons each), then pool the tile's
// elements from them (shared::RoiTileValue: the CPU kernel's samples, weights and order of
// operations, so the same bits; the CPU tests run these functions). The tile's output is one
// contiguous span, written by consecutive threads. A RoI whose grid is too large for the shared taps
// (more than shared::kRoiMaxAxisTaps a side) computes its taps per sample, as the CPU op allows up
// to its sample limits. 32-bit in-map index math wherever the map's plane allows.
//
// Why this shape. The first GPU run (H100, 2026-11-27, ncu) measured the previous design, a plan
// launch and then a thread per element computing its taps as it went, at 0.55 ms for roi_align.box
// sampling 0 (1000 RoIs, 256 channels, 7x7: 12.5 M elements of ~6 samples), against ORT's 0.40 ms
// and torchvision's 0.42 ms: 56 registers a thread (47% occupancy), L1 hits 91%, DRAM at 21%. The
// time goes to latency and instructions, not traffic: every element recomputed its samples'
// coordinates (an IEEE division each, ~20 instructions with its check) before four dependent
// gathers per sample. Here a RoI's taps cost ~60 divisions for all its 12,544 elements.
//
// Expected time, roi_align.box on an H100: per element about 6 samples x (two shared-memory tap
// reads, four L1/L2 gathers, ~10 float operations) and no division: about 40% of the previous
// kernel's instructions, so about 0.2-0.25 ms if it stays latency-bound at 75% occupancy (the output,
// 50 MB, is 17 us of DRAM time); to be measured on the next GPU run.
#include "kernels/cuda/roi_align.h"

#include "core/work_limits.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/shared/roi_align_sampling.h"

namespace opbridge::cuda {
namespace {

// Channels per block: 32 x 49 bins = 1,568 elements (about 6 per thread) for box heads, 6,272 for
// 14x14 mask heads; 1000 RoIs of 256 channels make 8,000 blocks.
constexpr int64_t kRoiTileChannels = 32;
// At most 40 registers a thread (6 blocks of 256 threads an SM, 75% occupancy): the gathers' latency
// is hidden by the warps in flight. On Turing, whose SM holds 4 such blocks, at most 64.
constexpr int kRoiAlignBlocksPerSm = 6;

// A RoI whose taps do not fit, out of line: its per-sample tap arithmetic (divisions, 64-bit sample
// budget) would otherwise take registers from the common path.
template <class Index, class T>
__device__ __noinline__ float UntappedValue(const RoiAlignParams& p, const shared::RoiPlan& plan, const T* input,
                                            int64_t channels, Index height, Index width, int64_t first_channel,
                                            Index e) {
  return shared::RoiTileValue<Index>(p, plan, false, nullptr, nullptr, input, channels, height, width, first_channel,
                                     e);
}

// The call's work (core/work_limits.h), as the CPU kernel counts it: the samples of the RoIs it pools.
template <class T>
__global__ void RoiWorkKernel(RoiAlignParams p, const T* rois, int64_t num_rois, int64_t batch,
                              unsigned long long* call_samples) {
  const int64_t bins = p.output_height * p.output_width;
  OPBRIDGE_CUDA_FOR(int64_t, r, num_rois) {
    const shared::RoiPlan plan = shared::MakeRoiPlan(p, rois + 5 * r, batch);
    if (plan.kind == shared::RoiPlan::kPool) {
      atomicAdd(call_samples,
                static_cast<unsigned long long>(RoiSamples(bins, plan.geometry.grid_h, plan.geometry.grid_w)));
    }
  }
}

// Mode is a template argument, so that each kernel holds one pooling loop. T is the storage type
// of the map, the RoIs and the output (half_storage.h): the arithmetic is float32's either way.
template <class Index, RoiPoolMode Mode, class T>
__global__ void __launch_bounds__(kThreads, OPBRIDGE_BLOCKS_PER_SM(kRoiAlignBlocksPerSm))
    RoiAlignKernel(RoiAlignParams params, const T* rois, int64_t batch, const T* input, int64_t channels,
                   Index height, Index width, int64_t tiles_per_roi, int64_t tiles,
                   const unsigned long long* call_samples, T* output) {
  RoiAlignParams p = params;
  p.mode = Mode;
  // Over the call's work limit, the CPU op refuses the whole call: every element is NaN.
  const bool refused = ExceedsCallWork(static_cast<int64_t>(*call_samples), channels);
  __shared__ shared::RoiPlan plan;
  __shared__ shared::AxisTapOf<Index> rows[shared::kRoiMaxAxisTaps], columns[shared::kRoiMaxAxisTaps];
  // Tile k is RoI k / tiles_per_roi, channels from (k % tiles_per_roi) * kRoiTileChannels (a block
  // takes several where there are more tiles than a grid holds).
  for (int64_t k = blockIdx.x; k < tiles; k += gridDim.x) {
    const int64_t roi = k / tiles_per_roi, first_channel = (k % tiles_per_roi) * kRoiTileChannels;
    if (threadIdx.x == 0) {
      plan = shared::MakeRoiPlan(p, rois + 5 * roi, batch);
      if (refused) plan.kind = shared::RoiPlan::kNan;
    }
    __syncthreads();
    const bool tapped = shared::RoiTapsFit(p, plan);
    if (tapped) {
      const Index num_rows = static_cast<Index>(shared::GridRows<int64_t>(plan.geometry) * p.output_height);
      const Index num_columns = static_cast<Index>(shared::GridColumns<int64_t>(plan.geometry) * p.output_width);
      for (Index t = threadIdx.x; t < num_rows; t += blockDim.x) {
        rows[t] = shared::RoiRowTap<Index>(plan.geometry, height, t);
      }
      for (Index t = threadIdx.x; t < num_columns; t += blockDim.x) {
        columns[t] = shared::RoiColumnTap<Index>(plan.geometry, width, t);
      }
    }
    __syncthreads();
    const int64_t tile = channels - first_channel < kRoiTileChannels ? channels - first_channel : kRoiTileChannels;
    const Index count = static_cast<Index>(tile * p.output_height * p.output_width);
    T* out = output + (roi * channels + first_channel) * p.output_height * p.output_width;
    // shared::RoiTileValue, its untapped branch out of line.
    for (Index e = threadIdx.x; e < count; e += blockDim.x) {
      shared::Store(out + e, tapped ? shared::RoiTileValue<Index>(p, plan, true, rows, columns, input, channels,
                                                                  height, width, first_channel, e)
                                    : UntappedValue<Index>(p, plan, input, channels, height, width, first_channel, e));
    }
    __syncthreads();  // every thread is done with the plan and the taps before the next tile's
  }
}

template <class Index, class T>
void LaunchRoiAlign(const RoiAlignParams& params, const T* rois, int64_t batch, const T* input,
                    int64_t channels, int64_t height, int64_t width, int64_t tiles_per_roi, int64_t tiles,
                    unsigned int blocks, const unsigned long long* call_samples, T* output, Stream stream) {
  const auto h = static_cast<Index>(height), w = static_cast<Index>(width);
  if (params.mode == RoiPoolMode::kAvg) {
    RoiAlignKernel<Index, RoiPoolMode::kAvg, T><<<blocks, kThreads, 0, stream>>>(
        params, rois, batch, input, channels, h, w, tiles_per_roi, tiles, call_samples, output);
  } else {
    RoiAlignKernel<Index, RoiPoolMode::kMax, T><<<blocks, kThreads, 0, stream>>>(
        params, rois, batch, input, channels, h, w, tiles_per_roi, tiles, call_samples, output);
  }
}

}  // namespace

template <class T>
Status RoiAlign(const RoiAlignParams& params, const T* input, int64_t batch, int64_t channels, int64_t height,
                int64_t width, const T* rois, int64_t num_rois, T* output, ScratchAllocator& device_scratch,
                Stream stream) {
  ClearStaleError();
  if (num_rois == 0 || channels == 0 || params.output_height * params.output_width == 0) return Status::Ok();
  ScratchBlock block(device_scratch, sizeof(unsigned long long));  // freed after the queued kernels (cuda_glue.h)
  if (block.data() == nullptr) return OutOfScratch(sizeof(unsigned long long));
  auto* call_samples = static_cast<unsigned long long*>(block.data());
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemsetAsync(call_samples, 0, sizeof(unsigned long long), stream),
                                     "clearing the RoIAlign work count"));
  RoiWorkKernel<T><<<BlocksFor(num_rois), kThreads, 0, stream>>>(params, rois, num_rois, batch, call_samples);
  OPBRIDGE_RETURN_IF_ERROR(LaunchStatus("the RoIAlign work kernel", stream));
  const int64_t tiles_per_roi = (channels + kRoiTileChannels - 1) / kRoiTileChannels;
  const int64_t tiles = num_rois * tiles_per_roi;
  const unsigned int blocks = static_cast<unsigned int>(tiles < (int64_t{1} << 30) ? tiles : (int64_t{1} << 30));
  // A tile's element count (32 channels x out_h * out_w, which the op allows up to 2^31) and the map's
  // plane take 64-bit indices only where 32 bits cannot hold them.
  const bool tile_fits_int32 = FitsInt32(kRoiTileChannels * params.output_height * params.output_width);
  if (tile_fits_int32 && FitsInt32(height * width)) {
    LaunchRoiAlign<int32_t>(params, rois, batch, input, channels, height, width, tiles_per_roi, tiles, blocks,
                            call_samples, output, stream);
  } else {
    LaunchRoiAlign<int64_t>(params, rois, batch, input, channels, height, width, tiles_per_roi, tiles, blocks,
                            call_samples, output, stream);
  }
  return LaunchStatus("the RoIAlign kernel", stream);
}

#define OPBRIDGE_ROI_ALIGN(T)                                                                                     \
  template Status RoiAlign<T>(const RoiAlignParams&, const T*, int64_t, int64_t, int64_t, int64_t, const T*, int64_t, \
                              T*, ScratchAllocator&, Stream);
OPBRIDGE_ROI_ALIGN(float)
OPBRIDGE_ROI_ALIGN(shared::Float16)
OPBRIDGE_ROI_ALIGN(shared::BFloat16)
#undef OPBRIDGE_ROI_ALIGN

}  // namespace opbridge::cuda
