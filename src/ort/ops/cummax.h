// Cumulative maximum / minimum ORT glue.
#pragma once

#include <memory>

#include "core/cummax.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// One glue class per direction (the identity says which, the node has only `dim`).
template <Extreme kExtreme>
class CumExtremeOp {
 public:
  explicit CumExtremeOp(const CumMaxParams& params) : params_(params) {}
  static const OpSchema& Schema();
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<CumExtremeOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  CumMaxParams params_;
};

using CumMaxOp = CumExtremeOp<Extreme::kMax>;
using CumMinOp = CumExtremeOp<Extreme::kMin>;

}  // namespace opbridge::ort
