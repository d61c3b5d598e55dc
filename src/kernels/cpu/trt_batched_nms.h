// TensorRT's batched NMS (mmdeploy's TRTBatchedNMS / TRTBatchedRotatedNMS plugins) as a CPU
// kernel (float32). Framework-free.
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
Status TrtBatchedNms(const TrtBatchedNmsParams& params, const float* boxes, int64_t loc_classes, const float* scores,
                     int64_t batch, int64_t num_boxes, int64_t classes, float* dets, int32_t* labels, int32_t* index,
                     ScratchAllocator& scratch, const TaskRunner& runner);

}  // namespace opbridge::cpu
