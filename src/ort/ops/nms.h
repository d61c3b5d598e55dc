// Axis-aligned NMS ORT glue.
#pragma once

#include <cstring>
#include <functional>
#include <memory>

#include "core/nms.h"
#include "kernels/cpu/nms_drivers.h"
#include "ort/generated/nms_attrs.h"
#include "ort/ort_util.h"

namespace opbridge::ort {

// opbridge::Nms and mmcv::NonMaxSuppression: boxes [N, 4], scores [N] -> keep [K].
class NmsOp {
 public:
  using Attrs = NmsAttrs;  // generated from the manifest
  explicit NmsOp(const NmsParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<NmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 protected:
  // Both Computes: the inputs (idxs with categories) and their shape checks.
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, bool with_categories, InputTensor* boxes,
                        InputTensor* scores, InputTensor* idxs);
  Status Run(const OrtApi& api, OrtKernelContext* ctx, bool with_categories) const;
  Status RunCuda(const OrtApi& api, OrtKernelContext* ctx, bool with_categories) const;  // nms_cuda.cc
  NmsParams params_;
};

// opbridge::BatchedNms: boxes [N, 4], scores [N], idxs [N] (int64 categories) -> keep [K].
class BatchedNmsOp : public NmsOp {
 public:
  using Attrs = BatchedNmsAttrs;  // generated from the manifest
  using NmsOp::NmsOp;
  static Status Create(const Attrs& attrs, std::unique_ptr<BatchedNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_cuda.cc
};

// opbridge::MulticlassNms: boxes [B, N, 4], scores [B, C, N] -> selected [K, 3] (batch, class, box).
class MulticlassNmsOp {
 public:
  using Attrs = MulticlassNmsAttrs;  // generated from the manifest
  explicit MulticlassNmsOp(const MulticlassNmsParams& params) : params_(params) {}
  static Status Create(const Attrs& attrs, std::unique_ptr<MulticlassNmsOp>* op);
  Status Compute(const OrtApi& api, OrtKernelContext* ctx) const;
  Status ComputeCuda(const OrtApi& api, OrtKernelContext* ctx) const;  // nms_cuda.cc
  static Status InferShape(const ShapeInference& infer);

 private:
  // Both Computes: the inputs and their shape checks.
  static Status Prepare(const OrtApi& api, OrtKernelContext* ctx, InputTensor* boxes, InputTensor* scores);
  MulticlassNmsParams params_;
};

// Shape inference of an op whose one output is [K] or [K, columns] with K known only at run
// time (columns 0: rank 1).
Status InferKeptRows(const ShapeInference& infer, ONNXTensorElementDataType type, int64_t columns);

// The CUDA NMS kernels' output (nms_cuda.cc, CUDA builds): output 0 as [rows] (columns 0) or
// [rows, columns], allocated once the kernel has found out its rows.
std::function<Status(int64_t rows, int64_t** output)> OutputRowsOnce(const OrtApi& api, OrtKernelContext* ctx,
                                                                     int64_t columns);

// The NMS ops' outputs, whose size the kernel finds out. OutputKeptIndices runs
// kernel(scratch, keep, &kept), which writes up to n indices to keep (scratch memory), and copies
// them to output 0 as [kept]. OutputSelectedRows runs kernel(scratch, kept_boxes, kept_counts)
// for the multi-class layout (cap boxes per batch and class) and writes output 0 as the
// [rows, 3] (batch, class, box) rows.
template <class Kernel>
Status OutputKeptIndices(const OrtApi& api, OrtKernelContext* ctx, int64_t n, Kernel&& kernel) {
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  const size_t bytes = ArenaBytes<int64_t>(n);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  auto* keep = static_cast<int64_t*>(block.data());
  int64_t kept = 0;
  OPBRIDGE_RETURN_IF_ERROR(kernel(scratch, keep, &kept));
  void* out = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {kept}, &out));
  if (kept > 0) std::memcpy(out, keep, sizeof(int64_t) * static_cast<size_t>(kept));
  return Status::Ok();
}

template <class Kernel>
Status OutputSelectedRows(const OrtApi& api, OrtKernelContext* ctx, int64_t batch, int64_t classes, int64_t cap,
                          Kernel&& kernel) {
  void* out = nullptr;
  // No boxes (cap 0) or no problems: nothing to select, and no per-problem bookkeeping for a B * C
  // of up to 2^31 - 1 empty problems.
  if (batch * classes * cap == 0) return AllocateOutput(api, ctx, 0, {0, 3}, &out);
  OrtScratchAllocator scratch(api, ctx);
  OPBRIDGE_RETURN_IF_ERROR(scratch.Open());
  const size_t bytes = ArenaBytes<int32_t>(batch * classes * cap) + ArenaBytes<int64_t>(batch * classes);
  ScratchBlock block(scratch, bytes);
  if (block.data() == nullptr) return Status::Error("could not allocate ", bytes, " bytes of scratch memory");
  Arena arena(block.data(), bytes);
  int32_t* kept_boxes = arena.Take<int32_t>(batch * classes * cap);
  int64_t* kept_counts = arena.Take<int64_t>(batch * classes);
  OPBRIDGE_RETURN_IF_ERROR(kernel(scratch, kept_boxes, kept_counts));
  int64_t rows = 0;
  for (int64_t bc = 0; bc < batch * classes; ++bc) rows += kept_counts[bc];
  OPBRIDGE_RETURN_IF_ERROR(AllocateOutput(api, ctx, 0, {rows, 3}, &out));
  cpu::WriteSelectedRows(kept_boxes, kept_counts, batch, classes, cap, static_cast<int64_t*>(out));
  return Status::Ok();
}

}  // namespace opbridge::ort
