// Cumulative maximum / minimum ORT glue.
#pragma once

#include <memory>
#include <type_traits>

#include "core/cummax.h"
#include "ort/generated/cummax_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// One glue class per direction (the identity says which, the node has only `dim`).
template <Extreme kExtreme>
class CumExtremeOp {
 public:
  // Generated from the manifest (the two are the same: one signature).
  using Attrs = std::conditional_t<kExtreme == Extreme::kMax, CumMaxAttrs, CumMinAttrs>;
  explicit CumExtremeOp(const CumMaxParams& params) : params_(params) {}
  // Checks dim against the input's rank when the session knows it.
  static Status Create(const Attrs& attrs, const OrtApi& api, const OrtKernelInfo* info,
                       std::unique_ptr<CumExtremeOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  static Status InferShape(const ShapeInference& infer);

 private:
  CumMaxParams params_;
};

using CumMaxOp = CumExtremeOp<Extreme::kMax>;
using CumMinOp = CumExtremeOp<Extreme::kMin>;

}  // namespace opbridge::ort
