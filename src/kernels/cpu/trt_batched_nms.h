// TensorRT's batched NMS (mmdeploy's TRTBatchedNMS / TRTBatchedRotatedNMS plugins) as a CPU
// kernel (float32, float16 or bfloat16 boxes, scores and dets: T, read as the floats they hold and
// written back as they were read). Framework-free.
#pragma once

#include <cstdint>

#include "core/parallel.h"
#include "core/scratch.h"
#include "core/status.h"
#include "core/trt_batched_nms.h"

namespace opbridge::cpu {

// boxes [batch, num_boxes, loc_classes, box_size] (loc_classes 1: shared), scores
// [batch, num_boxes, classes]. Writes dets [batch, keep_topk, box_size + 1] (box, score),
// labels [batch, keep_topk] and, when index is not null, index [batch, keep_topk]; rows past the
// detections are zeros with label and index -1.
template <class T>
Status TrtBatchedNms(const TrtBatchedNmsParams& params, const T* boxes, int64_t loc_classes, const T* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, T* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
