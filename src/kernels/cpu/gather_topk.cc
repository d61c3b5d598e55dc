// Gather of top-k rows CPU kernel. Output rows are dealt to tasks in contiguous chunks of about
// kChunkElements elements; each row is written by one task, so results do not depend on threads.
#include "kernels/cpu/gather_topk.h"

#include <algorithm>
#include <cstring>

namespace opbridge::cpu {
namespace {

// About 1 MiB of float32 output per task. A copy runs at memory speed, so a second thread helps
// only large gathers: waking ORT's pool costs about 0.1 ms, more than mmdet's [2, 1000, 80]
// gather takes on one thread (measured: 0.03 ms on one thread, 0.2 ms dealt in 10 tasks).
constexpr int64_t kChunkElements = 262144;

// Word is a 4- or 8-byte unsigned integer: copying words keeps every bit (NaN payloads included).
template <class Word, class Index>
void GatherRows(const Word* data, const Index* indices, const GatherTopkLayout& layout, int64_t first_row,
                int64_t end_row, Word* output) {
  const int64_t row = layout.row, picks = layout.picks, candidates = layout.candidates;
  for (int64_t r = first_row; r < end_row; ++r) {
    const int64_t source = GatherTopkSource(indices[r], candidates);  // in range: checked before
    const Word* from = data + ((r / picks) * candidates + source) * row;
    Word* to = output + r * row;
    if (row == 1) {
      *to = *from;  // scores [B, N] gathered one by one: no call per element
    } else {
      std::memcpy(to, from, sizeof(Word) * static_cast<size_t>(row));
    }
  }
}

template <class Word, class Index>
Status Run(const void* data, const Index* indices, const GatherTopkLayout& layout, void* output,
           const TaskRunner& runner) {
  const int64_t rows = layout.batch * layout.picks;
  if (rows == 0 || layout.row == 0) return Status::Ok();
  const int64_t rows_per_task = std::max<int64_t>(1, kChunkElements / layout.row);
  const auto* from = static_cast<const Word*>(data);
  auto* to = static_cast<Word*>(output);
  return ParallelFor(runner, NumChunks(static_cast<size_t>(rows), static_cast<size_t>(rows_per_task)),
                     [&](size_t task) {
                       const int64_t first = static_cast<int64_t>(task) * rows_per_task;
                       GatherRows(from, indices, layout, first, std::min(rows, first + rows_per_task), to);
                     });
}

}  // namespace

template <class Index>
Status GatherTopk(const void* data, int element_bytes, const Index* indices, const GatherTopkLayout& layout,
                  void* output, const TaskRunner& runner) {
  switch (element_bytes) {
    case 4: return Run<uint32_t>(data, indices, layout, output, runner);
    case 8: return Run<uint64_t>(data, indices, layout, output, runner);
    default: return Status::Error("GatherTopk copies 4- or 8-byte elements, got ", element_bytes, " bytes");
  }
}

template Status GatherTopk<int32_t>(const void*, int, const int32_t*, const GatherTopkLayout&, void*,
                                    const TaskRunner&);
template Status GatherTopk<int64_t>(const void*, int, const int64_t*, const GatherTopkLayout&, void*,
                                    const TaskRunner&);

}  // namespace opbridge::cpu
