// RoIAlign CPU kernel.
//
// Sample points and bilinear rules are torchvision's roi_align_forward_kernel_impl (itself
// Caffe2's RoIAlign; kernels/shared/roi_align_sampling.h, shared with the CUDA kernel): per bin, a grid_h x grid_w grid of points at
// start + p * bin + (i + 0.5) * bin / grid; a point outside [-1, H] x [-1, W] reads 0; otherwise
// coordinates are clamped to the map and interpolated between the four neighbours.
//
// Those rules are separable: whether a point reads 0, its neighbour rows and columns and their
// weights depend on its y or its x alone. So per RoI the kernel prepares the sample rows and
// sample columns once (shared by all channels), and per channel
//   "avg": first sums every needed input row over the columns of each output bin
//          (x-interpolation), then combines those row sums over the rows of each bin
//          (y-interpolation). That is half the multiply-adds of interpolating each sample on its
//          own, and reads input rows contiguously. The sum is the same as torchvision's, in a
//          different order: results agree to float32 rounding (~1e-7 relative).
//   "max": interpolates each sample with torchvision's formula (weights hy*hx, hy*lx, ...) and
//          keeps the largest.
// RoIs are prepared first (their sample rows and columns), then one task per channel pools all
// RoIs from that channel's plane, which stays in cache.
#include "kernels/cpu/roi_align.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/shared/roi_align_sampling.h"

namespace opbridge::cpu {
namespace {

using shared::AxisTap;
using shared::RoiGeometry;

// The prepared sampling of one RoI: its rows and columns, and for "avg" the distinct input rows
// they read, as ranges into the arrays of a RoiGroup.
struct PreparedRoi {
  float batch_index;  // rois[r, 0], checked (CheckRoiAlignRois) where the box is finite
  int64_t grid_h, grid_w;
  float count;
  bool finite;
  size_t rows, cols, ids, num_ids;  // offsets into RoiGroup's arrays
  int64_t first_col, last_col;  // the input columns the sample columns read (none: first > last)
};

// The prepared RoIs of a group, sized to stay within kGroupTapBudget taps.
struct RoiGroup {
  std::vector<PreparedRoi> rois;
  std::vector<AxisTap> rows, cols;
  std::vector<int64_t> row_ids;                      // per RoI: distinct input rows, sorted
  std::vector<int64_t> row_slot_low, row_slot_high;  // per sample row: slots in its row_ids
  size_t max_ids = 0;
  // The map elements the group's RoIs read per channel (avg: their rows' column spans; max: four per
  // sample): with half storage, where they outnumber a plane's, the plane is converted once instead.
  double reads = 0;
};

// RoIs are prepared in groups of at most this many axis taps (a few MB), so that absurdly large
// adaptive grids cannot make the preparation unbounded.
constexpr size_t kGroupTapBudget = size_t{1} << 18;

// The largest plane a half-storage task converts whole (16 MB of float32 per task).
constexpr int64_t kMaxConvertedPlane = int64_t{1} << 22;

void AppendAxisTaps(float start, float bin, int64_t bins, int64_t grid, int64_t size,
                    std::vector<AxisTap>* taps) {
  for (int64_t b = 0; b < bins; ++b) {
    for (int64_t i = 0; i < grid; ++i) taps->push_back(shared::SampleTap<int64_t>(start, bin, b, i, grid, size));
  }
}

template <class T>
void Prepare(const RoiAlignParams& p, const T* roi, int64_t height, int64_t width, RoiGroup* group) {
  const RoiGeometry g = shared::MakeRoiGeometry(p, roi);
  PreparedRoi pr;
  pr.batch_index = shared::Load(roi);
  pr.finite = g.finite;
  pr.grid_h = std::max<int64_t>(g.grid_h, 0);
  pr.grid_w = std::max<int64_t>(g.grid_w, 0);
  // torchvision divides by max(grid_h * grid_w, 1) computed on the signed grid sizes.
  pr.count = static_cast<float>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  pr.rows = group->rows.size();
  pr.cols = group->cols.size();
  pr.ids = group->row_ids.size();
  pr.num_ids = 0;
  if (g.finite) {
    AppendAxisTaps(g.start_h, g.bin_h, p.output_height, pr.grid_h, height, &group->rows);
    AppendAxisTaps(g.start_w, g.bin_w, p.output_width, pr.grid_w, width, &group->cols);
  }
  pr.first_col = width;
  pr.last_col = -1;
  for (size_t t = pr.cols; t < group->cols.size(); ++t) {
    const AxisTap& tap = group->cols[t];
    if (!tap.inside) continue;
    pr.first_col = std::min(pr.first_col, tap.low);
    pr.last_col = std::max(pr.last_col, tap.high);
  }
  const size_t num_rows = group->rows.size() - pr.rows;
  group->row_slot_low.resize(group->rows.size(), 0);
  group->row_slot_high.resize(group->rows.size(), 0);
  if (p.mode == RoiPoolMode::kAvg && pr.grid_w > 0) {
    // The distinct input rows the sample rows read. (They usually ascend, but an inverted box
    // with a fixed sampling ratio samples downwards, so sort.)
    for (size_t s = 0; s < num_rows; ++s) {
      const AxisTap& t = group->rows[pr.rows + s];
      if (t.inside) group->row_ids.insert(group->row_ids.end(), {t.low, t.high});
    }
    const auto first = group->row_ids.begin() + static_cast<std::ptrdiff_t>(pr.ids);
    std::sort(first, group->row_ids.end());
    group->row_ids.erase(std::unique(first, group->row_ids.end()), group->row_ids.end());
    pr.num_ids = group->row_ids.size() - pr.ids;
    const auto ids_begin = group->row_ids.begin() + static_cast<std::ptrdiff_t>(pr.ids);
    for (size_t s = 0; s < num_rows; ++s) {
      const AxisTap& t = group->rows[pr.rows + s];
      if (!t.inside) continue;
      group->row_slot_low[pr.rows + s] = std::lower_bound(ids_begin, group->row_ids.end(), t.low) - ids_begin;
      group->row_slot_high[pr.rows + s] = std::lower_bound(ids_begin, group->row_ids.end(), t.high) - ids_begin;
    }
  }
  group->max_ids = std::max(group->max_ids, pr.num_ids);
  if (p.mode == RoiPoolMode::kAvg) {
    group->reads += static_cast<double>(pr.num_ids) * static_cast<double>(std::max<int64_t>(pr.last_col - pr.first_col + 1, 0));
  } else {
    group->reads += 4.0 * static_cast<double>(p.output_height * pr.grid_h) * static_cast<double>(p.output_width * pr.grid_w);
  }
  group->rois.push_back(pr);
}

// The row of `in` whose x-interpolation reads: for float storage the row itself; for half storage
// the RoI's columns of it converted to float32 into `converted` (a contiguous, vectorized
// conversion of each element once, where the interpolation reads most of them twice or more),
// addressed by the same column indices.
inline const float* InterpolatedRow(const float* row, const PreparedRoi&, float*) { return row; }
template <class T>
const float* InterpolatedRow(const T* row, const PreparedRoi& r, float* converted) {
  shared::LoadRun(row + r.first_col, r.last_col - r.first_col + 1, converted);
  return converted - r.first_col;
}

template <class T>
void PoolAvg(const RoiAlignParams& p, const RoiGroup& group, const PreparedRoi& r, const T* in,
             int64_t width, float* row_sums, float* converted, float* out) {
  const int64_t out_h = p.output_height, out_w = p.output_width;
  const int64_t grid_h = r.grid_h, grid_w = r.grid_w;
  if (grid_h == 0 || grid_w == 0) {  // no samples (an empty or inverted aligned box): 0
    std::fill(out, out + out_h * out_w, 0.0f);
    return;
  }
  const AxisTap* rows = group.rows.data() + r.rows;
  const AxisTap* cols = group.cols.data() + r.cols;
  const int64_t* row_ids = group.row_ids.data() + r.ids;
  // x-interpolation of every needed row, summed over the columns of each bin.
  for (size_t slot = 0; slot < r.num_ids; ++slot) {
    const float* row = InterpolatedRow(in + row_ids[slot] * width, r, converted);
    float* sums = row_sums + slot * out_w;
    for (int64_t pw = 0; pw < out_w; ++pw) {
      float sum = 0.0f;
      const AxisTap* col = cols + pw * grid_w;
      for (int64_t ix = 0; ix < grid_w; ++ix) {
        if (col[ix].inside) sum += col[ix].w_low * row[col[ix].low] + col[ix].w_high * row[col[ix].high];
      }
      sums[pw] = sum;
    }
  }
  // y-interpolation of those sums over the rows of each bin.
  for (int64_t ph = 0; ph < out_h; ++ph) {
    float* out_row = out + ph * out_w;
    for (int64_t pw = 0; pw < out_w; ++pw) out_row[pw] = 0.0f;
    for (int64_t iy = 0; iy < grid_h; ++iy) {
      const size_t s = static_cast<size_t>(ph * grid_h + iy);
      const AxisTap& t = rows[s];
      if (!t.inside) continue;
      const float* low = row_sums + group.row_slot_low[r.rows + s] * out_w;
      const float* high = row_sums + group.row_slot_high[r.rows + s] * out_w;
      for (int64_t pw = 0; pw < out_w; ++pw) out_row[pw] += t.w_low * low[pw] + t.w_high * high[pw];
    }
    for (int64_t pw = 0; pw < out_w; ++pw) out_row[pw] /= r.count;
  }
}

template <class T>
void PoolMax(const RoiAlignParams& p, const RoiGroup& group, const PreparedRoi& r, const T* in,
             int64_t width, float* out) {
  const int64_t out_h = p.output_height, out_w = p.output_width;
  const int64_t grid_h = r.grid_h, grid_w = r.grid_w;
  const AxisTap* rows = group.rows.data() + r.rows;
  const AxisTap* cols = group.cols.data() + r.cols;
  const bool has_samples = grid_h > 0 && grid_w > 0;
  for (int64_t ph = 0; ph < out_h; ++ph) {
    for (int64_t pw = 0; pw < out_w; ++pw) {
      // Max of the interpolated samples (mmcv's "max" mode). Unlike mmcv there is no -10000
      // floor, NaN propagates like torch.max, and a bin without samples gives 0.
      float best = has_samples ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (int64_t iy = 0; iy < grid_h && !std::isnan(best); ++iy) {
        const AxisTap& y = rows[ph * grid_h + iy];
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const AxisTap& x = cols[pw * grid_w + ix];
          const float v = shared::InterpolateSample(y, x, in, width);
          if (std::isnan(v)) {
            best = v;
            break;
          }
          if (v > best) best = v;
        }
      }
      out[ph * out_w + pw] = best;
    }
  }
}

}  // namespace

template <class T, class R>
Status RoiAlign(const RoiAlignParams& p, const T* input, int64_t batch, int64_t channels,
                int64_t height, int64_t width, const R* rois, int64_t num_rois, T* output,
                const TaskRunner& runner, const int64_t* output_rows, CallSampleWork* work) {
  (void)batch;
  const int64_t out_h = p.output_height, out_w = p.output_width;
  const int64_t plane = height * width;
  const int64_t bins = out_h * out_w;

  // Reject absurd grids before starting any work: per RoI, at most 2^20 sample rows and
  // columns, and 2^31 samples ("max" interpolates every one of them); per call, the work limit
  // (a multi-level caller passes the call's count, which its levels add to).
  CallSampleWork own_work(channels);
  CallSampleWork& call_work = work != nullptr ? *work : own_work;
  for (int64_t r = 0; r < num_rois; ++r) {
    const RoiGeometry g = shared::MakeRoiGeometry(p, rois + r * 5);
    OPBRIDGE_RETURN_IF_ERROR(CheckRoiSampleBudget(output_rows ? output_rows[r] : r, g.grid_h, g.grid_w, out_h, out_w));
    OPBRIDGE_RETURN_IF_ERROR(call_work.Add(RoiSamples(bins, g.grid_h, g.grid_w)));
  }

  RoiGroup group;
  for (int64_t first = 0; first < num_rois;) {
    // Prepare a group of RoIs (their sampling is shared by all channels).
    group = RoiGroup();
    int64_t last = first;
    while (last < num_rois && (last == first || group.rows.size() + group.cols.size() < kGroupTapBudget)) {
      Prepare(p, rois + last * 5, height, width, &group);
      ++last;
    }
    // One task per channel: it pools every RoI of the group from that channel's plane, which
    // stays in cache, where one task per RoI would stream the whole feature map per RoI.
    OPBRIDGE_RETURN_IF_ERROR(ParallelFor(runner, static_cast<size_t>(channels), [&](size_t task) {
      const int64_t c = static_cast<int64_t>(task);
      std::vector<float> row_sums(group.max_ids * static_cast<size_t>(out_w));
      // Half storage: a RoI's bins are pooled in float32 here, then rounded once as they are stored.
      // The map's elements are converted as they are read: the RoI's column span of each row it
      // reads, or, where the group reads more elements than a plane holds (a detector's 1000 RoIs),
      // the channel's plane of each image once, into a float32 copy the float32 code reads. The
      // values are the same either way (the conversion is exact); only the work differs.
      constexpr bool kFloat = std::is_same_v<T, float>;
      const bool whole_planes = !kFloat && plane <= kMaxConvertedPlane && group.reads > static_cast<double>(plane);
      std::vector<float> pooled(kFloat ? 0 : static_cast<size_t>(bins)), converted(kFloat ? 0 : width);
      std::vector<float> converted_plane(whole_planes ? static_cast<size_t>(plane) : 0);
      int64_t converted_image = -1;
      for (size_t k = 0; k < group.rois.size(); ++k) {
        const PreparedRoi& r = group.rois[k];
        const int64_t index = first + static_cast<int64_t>(k);
        T* out = output + ((output_rows ? output_rows[index] : index) * channels + c) * bins;
        float* values = nullptr;
        if constexpr (kFloat) {
          values = out;
        } else {
          values = pooled.data();
        }
        if (!r.finite) {  // NaN or infinite box: the result is undefined, say so with NaN
          std::fill(values, values + bins, std::numeric_limits<float>::quiet_NaN());
        } else {
          const int64_t batch_index = static_cast<int64_t>(r.batch_index);
          const T* in = input + (batch_index * channels + c) * plane;
          // Pools from the plane as stored (converting the row spans it reads into row_buffer) or
          // from its float32 copy.
          auto pool = [&](const auto* plane_data, float* row_buffer) {
            if (p.mode == RoiPoolMode::kAvg) {
              PoolAvg(p, group, r, plane_data, width, row_sums.data(), row_buffer, values);
            } else {
              PoolMax(p, group, r, plane_data, width, values);
            }
          };
          if (whole_planes) {
            if (batch_index != converted_image) {
              shared::LoadRun(in, plane, converted_plane.data());
              converted_image = batch_index;
            }
            pool(converted_plane.data(), nullptr);
          } else {
            pool(in, converted.data());
          }
        }
        if constexpr (!kFloat) {
          shared::StoreRun(values, bins, out);
        }
      }
    }));
    first = last;
  }
  return Status::Ok();
}

#define OPBRIDGE_ROI_ALIGN(T, R)                                                                                \
  template Status RoiAlign<T, R>(const RoiAlignParams&, const T*, int64_t, int64_t, int64_t, int64_t, const R*, \
                                 int64_t, T*, const TaskRunner&, const int64_t*, CallSampleWork*);
OPBRIDGE_ROI_ALIGN(float, float)
OPBRIDGE_ROI_ALIGN(shared::Float16, shared::Float16)
OPBRIDGE_ROI_ALIGN(shared::BFloat16, shared::BFloat16)
OPBRIDGE_ROI_ALIGN(shared::Float16, float)  // the multi-level kernels' RoIs
OPBRIDGE_ROI_ALIGN(shared::BFloat16, float)
#undef OPBRIDGE_ROI_ALIGN

}  // namespace opbridge::cpu
