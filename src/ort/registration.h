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
  const char* provider;    // "CPU" or "CUDA": the execution provider the op's kernel runs on
  const OrtCustomOp* op;   // lives for the whole process: ORT calls into it until exit
  const OpSchema* schema;
};

// Every (identity, provider) pair, in registration order: each identity's CPU op, then its CUDA
// twin where it has one (OPBRIDGE_CUDA builds). Built once; never destroyed.
const std::vector<RegisteredOp>& RegisteredOps();

}  // namespace opbridge::ort
