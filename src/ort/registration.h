// opbridge ORT glue: the one table of every op identity the library registers.
#pragma once

#include <onnxruntime_c_api.h>

#include <vector>

#include "ort/ort_util.h"

namespace opbridge::ort {

struct RegisteredOp {
  const char* domain;      // ONNX domain, e.g. "mmcv"
  const char* name;        // ONNX op type, e.g. "MMCVRoiAlign"
  const char* kernel;      // opbridge's op stem, e.g. "roi_align" (file names use it)
  const OrtCustomOp* op;   // lives for the whole process: ORT calls into it until exit
  const OpSchema* schema;
};

// Every identity, in registration order. Built once; never destroyed.
const std::vector<RegisteredOp>& RegisteredOps();

}  // namespace opbridge::ort
