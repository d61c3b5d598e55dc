// Running maximum / minimum (cummax, cummin, corner pooling) as host-and-device functions: PyTorch's
// rule for one step, and the combination of two scanned runs that lets the CUDA kernel scan a line
// in pieces. The CPU engine (kernels/cpu/extreme_scan.cc) steps with ExtremeReplaces; the CUDA
// kernels (kernels/cuda/cummax.cu) scan segments with ScanSegment and join them with CombineRuns.
//
// Why pieces give the serial scan's result: after a run of steps, the serial scan holds the run's
// last NaN if it has one, else the last of its elements equal to its extreme (equal as numbers: -0
// and +0 are equal, and the later one is kept with its sign). Both are properties of the run's
// elements alone, so a run's result followed by a later run's is what CombineRuns gives: the later
// run's result when it replaces the earlier one's under the same rule, else the earlier one's. The
// combination is associative, and a scan built from it in any grouping has the serial values and
// indices exactly (every value is a copy of an input element: nothing is rounded).
#pragma once

#include <stdint.h>

#include "core/cummax.h"
#include "core/host_device.h"

namespace opbridge::shared {

// Whether x replaces the running extreme `best` (aten's cummax_cummin_helper): x >= best (x <= best
// for the minimum), so that the latest of equal values wins, or x is NaN, so that a NaN sticks once
// seen (x >= NaN is false) and a later NaN takes over. Both comparisons are evaluated (`|`, not
// `||`) so that vectorised loops have no branch.
template <Extreme kWhich, class T>
OPBRIDGE_HD inline bool ExtremeReplaces(T x, T best) {
  const bool better = kWhich == Extreme::kMax ? x >= best : x <= best;
  return better | (x != x);  // x != x is false for the integer types
}

// The result of scanning a run of steps: its running extreme and the step where it was taken.
template <class T>
struct ExtremeRun {
  T value;
  int64_t step;
};

// The scan of an earlier run followed by a later one, from their results (see the file comment).
template <Extreme kWhich, class T>
OPBRIDGE_HD inline ExtremeRun<T> CombineRuns(const ExtremeRun<T>& earlier, const ExtremeRun<T>& later) {
  return ExtremeReplaces<kWhich>(later.value, earlier.value) ? later : earlier;
}

// One line of a scan, as the CUDA kernels address it: `steps` elements `stride` apart from `base`
// (stride < 0 for a reverse scan: step s is at base + s * stride). `steps_in` gives the step each
// element stands for (a scan of segment results), or is null: element s stands for step s.
template <class T, class Index>
struct ScanLine {
  const T* in;
  const int64_t* steps_in;
  T* values;            // written like in, or null (ScanSegment then only returns the result)
  int64_t* steps_out;   // the step of each running extreme, or null
  Index base;
  Index stride;
};

// Steps [begin, end) of `line`, continuing the run `carry` when has_carry (else step begin starts
// the run); writes each step's running extreme where `line` has outputs and returns the run's result
// after step end - 1. The loop reads the elements four at a time before selecting, so that a GPU
// thread has four loads in flight (the selections form the only dependent chain).
template <Extreme kWhich, class T, class Index>
OPBRIDGE_HD inline ExtremeRun<T> ScanSegment(const ScanLine<T, Index>& line, Index begin, Index end, bool has_carry,
                                             ExtremeRun<T> carry) {
  ExtremeRun<T> run = carry;
  Index s = begin;
  if (!has_carry && s < end) {
    const Index at = line.base + s * line.stride;
    run.value = line.in[at];
    run.step = line.steps_in != nullptr ? line.steps_in[at] : static_cast<int64_t>(s);
    if (line.values != nullptr) line.values[at] = run.value;
    if (line.steps_out != nullptr) line.steps_out[at] = run.step;
    ++s;
  }
  constexpr int kAhead = 4;
  while (s < end) {
    const int n = end - s < kAhead ? static_cast<int>(end - s) : kAhead;
    T x[kAhead];
    for (int k = 0; k < kAhead; ++k) {
      if (k < n) x[k] = line.in[line.base + (s + k) * line.stride];
    }
    for (int k = 0; k < n; ++k) {
      const Index at = line.base + (s + k) * line.stride;
      if (ExtremeReplaces<kWhich>(x[k], run.value)) {
        run.value = x[k];
        run.step = line.steps_in != nullptr ? line.steps_in[at] : static_cast<int64_t>(s + k);
      }
      if (line.values != nullptr) line.values[at] = run.value;
      if (line.steps_out != nullptr) line.steps_out[at] = run.step;
    }
    s += n;
  }
  return run;
}

}  // namespace opbridge::shared
