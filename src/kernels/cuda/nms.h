// NMS CUDA kernels, axis-aligned and rotated: opbridge::Nms / BatchedNms /
// mmcv::NonMaxSuppression and opbridge::NmsRotated (a box list), opbridge::MulticlassNms,
// opbridge::MulticlassNmsRotated and mmdeploy::NMSRotated (the multi-class layout) and TensorRT's
// batched NMS, both kinds (opbridge::TrtBatchedNms / TrtBatchedRotatedNms, mmdeploy::TRTBatchedNMS /
// TRTBatchedRotatedNMS). Framework-free: raw device pointers, shapes, params, device scratch and the
// stream. One pipeline serves both kinds of box: only how a box enters and when one suppresses
// another differ (kernels/shared/nms_rules.h, nms_rotated_rules.h, which the CPU kernels use too).
//
// They keep exactly the CPU kernels' boxes in the CPU kernels' order: each problem's candidates (a
// box list, a category, an image and class) sorted by score with stable sorts of DescendingScoreKey
// (NaN first, ties by index), then greedy suppression with the same rule over the problem's mask of
// 64 x 64 tile pairs, computed grid-wide and resolved a tile at a time by a block per problem
// (kernels/shared/nms_tiles.h; nms.cu has the steps and the expected times). An output whose size
// depends on the data (the box list, the multi-class rows) costs one copy of its count to the host
// and a synchronization of the stream; TensorRT's fixed-size outputs need none. A call whose mask
// could exceed 256 MiB (many candidates per problem and many problems), or a per-(image, class) call
// of more than 2^20 entries, first copies the plan to the host (the mask's real size, the
// candidates' count); problems of more than 65,536 candidates, or past the 256 MiB, are suppressed
// in bands of 4,096 candidates over the whole GPU, each band against the earlier bands' kept boxes
// (memory linear in the candidates).
#pragma once

#include <stdint.h>

#include <functional>

#include "core/half_storage.h"
#include "core/nms.h"
#include "core/nms_match.h"
#include "core/nms_rotated.h"
#include "core/scratch.h"
#include "core/status.h"
#include "core/trt_batched_nms.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// Allocates the output for `rows` rows (device memory) once their count is known.
using AllocateRows = std::function<Status(int64_t rows, int64_t** output)>;

// boxes [n, 4], scores [n], categories [n] or null, in device memory: the kept indices, in
// descending score order (ties by index), to an output [kept] from allocate. T: float, or half storage
// (shared::Float16, BFloat16), read as the floats it holds: the float32 kernel's boxes on those values.
template <class T>
Status Nms(const NmsParams& params, const T* boxes, const T* scores, const int64_t* categories, int64_t n,
           const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream);

// boxes [n, 5] (cx, cy, w, h, theta), scores [n], categories [n] or null: cpu::NmsRotated's kept
// indices (mmcv's nms_rotated), as Nms writes them. T as Nms's.
template <class T>
Status NmsRotated(const NmsRotatedParams& params, const T* boxes, const T* scores, const int64_t* categories,
                  int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream);

// boxes [batch, n, 4], scores [batch, classes, n]: cpu::NmsMatch's (batch, class, kept box,
// suppressed box) rows (mmdeploy's NMSMatch), as WriteMatchRows orders them, to an output [rows, 4]
// from allocate: every box of each (batch, class) takes part in the suppression (the axis-aligned
// pipeline with mmdeploy's rule), then a thread per box finds the first kept box that suppresses it.
// T as Nms's.
template <class T>
Status NmsMatch(const NmsMatchParams& params, const T* boxes, const T* scores, int64_t batch, int64_t classes,
                int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch, Stream stream);

// boxes [batch, n, 4], scores [batch, classes, n]: the (batch, class, box) rows, batch-major, then
// class, then score order, to an output [rows, 3] from allocate. T as Nms's.
template <class T>
Status MulticlassNms(const MulticlassNmsParams& params, const T* boxes, const T* scores, int64_t batch,
                     int64_t classes, int64_t n, const AllocateRows& allocate, ScratchAllocator& device_scratch,
                     Stream stream);

// boxes [batch, n, 5], scores [batch, classes, n]: cpu::MulticlassNmsRotated's rows (mmdeploy's
// NMSRotated), as MulticlassNms writes them. T as Nms's.
template <class T>
Status MulticlassNmsRotated(const MulticlassNmsRotatedParams& params, const T* boxes, const T* scores,
                            int64_t batch, int64_t classes, int64_t n, const AllocateRows& allocate,
                            ScratchAllocator& device_scratch, Stream stream);

// boxes [batch, num_boxes, loc_classes, 4] (5 with params.rotated), scores [batch, num_boxes,
// classes]; dets [batch, keep_topk, 5] (6), labels and index (or null) [batch, keep_topk], as
// cpu::TrtBatchedNms writes them. T: the storage type of boxes, scores and dets, as Nms's.
template <class T>
Status TrtBatchedNms(const TrtBatchedNmsParams& params, const T* boxes, int64_t loc_classes, const T* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, T* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& device_scratch, Stream stream);

}  // namespace opbridge::cuda
