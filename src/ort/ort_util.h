// opbridge ORT glue: helpers over ORT's C API (1.21 headers) shared by every op's glue.
//
// Only the C API is used: it is ABI-stable across ORT releases, and nothing here can throw or
// abort. Every function returns an opbridge::Status; the op adapter turns it into an OrtStatus.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/scratch.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/half_storage.h"

namespace opbridge::ort {

// Converts an ORT status to ours (and releases it). nullptr means success.
Status FromOrtStatus(const OrtApi& api, OrtStatus* status);

enum class AttrKind { kInt, kFloat, kString, kInts, kFloats };

// One node attribute an op reads. Attributes with required = false take the default when the
// node does not carry them. Every op's list is generated from the manifest (ort/generated/).
struct AttrSpec {
  const char* name;
  AttrKind kind;
  bool required;
  int64_t int_default;
  float float_default;
  const char* string_default;
  std::vector<int64_t> ints_default;
  std::vector<float> floats_default;
};

struct TensorSpec {
  const char* name;
  // ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED: the op's type parameter T (OpSchema::t_types).
  ONNXTensorElementDataType type;
  bool optional;
  bool variadic = false;  // the last input only: one or more tensors of this type
  // A second dtype the input takes, or UNDEFINED: index inputs declared int64 that take int32
  // too (files written for TensorRT carry int32 indices). The op dispatches on the dtype itself.
  ONNXTensorElementDataType also = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

// Everything ORT needs to know about an op's node besides its identity.
struct OpSchema {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<AttrSpec> attrs;
  // The dtypes of the type parameter T, for an op generic over its dtype (cummax): an input
  // declared with T takes any of them, and an output declared with T has the dtype of that
  // input (ORT infers it so: the op has exactly one such input). Empty for ops without T.
  std::vector<ONNXTensorElementDataType> t_types = {};
};

// Reads a node's attributes at session creation, by the op's AttrSpec list: a name missing
// from the list is a programming error and is reported as such.
class AttrReader {
 public:
  AttrReader(const OrtApi& api, const OrtKernelInfo* info, const std::vector<AttrSpec>& specs)
      : api_(api), info_(info), specs_(specs) {}
  Status Int(const char* name, int64_t* value) const;
  Status Float(const char* name, float* value) const;
  Status String(const char* name, std::string* value) const;
  // A list of ints; a single int attribute is read as a list of one.
  Status Ints(const char* name, std::vector<int64_t>* value) const;
  // A list of floats; a single float attribute is read as a list of one.
  Status Floats(const char* name, std::vector<float>* value) const;

 private:
  Status Find(const char* name, AttrKind kind, const AttrSpec** spec) const;
  // Reads a list attribute of kind kInts (T = int64_t) or kFloats (T = float).
  template <class T>
  Status List(const char* name, AttrKind kind, const AttrSpec* spec, std::vector<T>* value) const;
  // Elements of `name` read as a list of this kind (0 when it does not read as one).
  size_t ListSize(const char* name, AttrKind kind) const;
  // Describes what the node holds under `name` when it is not of the expected kind.
  std::string DescribeOtherKind(const char* name) const;
  const OrtApi& api_;
  const OrtKernelInfo* info_;
  const std::vector<AttrSpec>& specs_;
};

// One input tensor as the kernels see it.
struct InputTensor {
  bool present = false;  // false for an absent optional input
  const void* data = nullptr;  // may be null for a present tensor with no elements
  Shape shape;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  template <class T>
  const T* Data() const { return static_cast<const T*>(data); }
};

Status GetInput(const OrtApi& api, OrtKernelContext* ctx, size_t index, InputTensor* tensor);
// "float32", "int64", ... (ONNX's element type names as numpy spells them).
const char* DtypeName(ONNXTensorElementDataType type);
// The schema's spec for input `index` (inputs past the last one belong to a variadic last input).
const TensorSpec& InputSpec(const OpSchema& schema, size_t index);
// Whether an input of element type `type` is what the schema declares for input `index`; the
// error names the input and the dtype it takes. Run-time (Compute) and session-time (shape
// creation) checks share it: the library declares its inputs to ORT as "any type", so that a
// wrong dtype is reported by the op with its identity instead of by ORT's generic type check.
Status CheckInputType(const OpSchema& schema, size_t index, ONNXTensorElementDataType type);
// CheckInputType for every input of a node when its kernel is created (at session creation: ORT
// ignores errors from shape inference); *all_checked tells whether every input's type was known
// then. Otherwise the op checks at run time, every input of each Compute call.
Status CheckInputTypes(const OrtApi& api, const OrtKernelInfo* info, const OpSchema& schema, bool* all_checked);
Status CheckInputTypes(const OrtApi& api, OrtKernelContext* ctx, const OpSchema& schema);
// The rank of input `index` as ORT knows it when the kernel is created, or -1 when it is not
// known then. ORT shows an input of unknown rank as rank 0, so rank 0 reads as unknown too: a
// scalar input is checked at run time.
Status InputRankAtCreation(const OrtApi& api, const OrtKernelInfo* info, size_t index, int64_t* rank);
// The number of inputs the node has (with variadic inputs, more than the schema lists).
Status InputCount(const OrtApi& api, OrtKernelContext* ctx, size_t* count);
// With `type` (an output of the type parameter T: the dtype the op writes), an output the graph
// types otherwise is an error rather than written in elements of another size.
Status AllocateOutput(const OrtApi& api, OrtKernelContext* ctx, size_t index, const Shape& shape,
                      void** data, ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED);
// AllocateOutput for the ops under the per-call work limits (core/work_limits.h): an output of more
// than kMaxCallOutputElements elements is the limit's error instead.
Status AllocateBoundedOutput(const OrtApi& api, OrtKernelContext* ctx, size_t index, const Shape& shape,
                             void** data,
                             ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED);

// Calls run(T{}) with T the storage type of float element type `type`: float, shared::Float16 or
// shared::BFloat16 (core/half_storage.h), for the ops whose type parameter T takes them.
// Another type is an error (the session's type check reports it first).
template <class Run>
Status ForFloatStorage(ONNXTensorElementDataType type, const Run& run) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return run(float{});
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return run(shared::Float16{});
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return run(shared::BFloat16{});
    default: return Status::Error("internal error: a float kernel was given dtype ", DtypeName(type));
  }
}

// The first element of `tensor` (shape checked by the caller: at least one element), of a float
// storage type (ForFloatStorage's), as the float it holds: a scalar input of an op's type parameter.
inline Status FirstFloatOf(const InputTensor& tensor, float* value) {
  return ForFloatStorage(tensor.type, [&](auto type) {
    *value = shared::Load(tensor.Data<decltype(type)>());
    return Status::Ok();
  });
}

// Scratch memory for one Compute call from the session's CPU allocator (ORT's arena reuses it
// across calls), as the kernels' ScratchAllocator. Open() once before use; then Allocate and Free may
// be called from any task (ORT's allocator is thread-safe). A CUDA twin's device scratch comes from
// CudaScratchAllocator (ort/cuda_glue.h), which ties it to the compute stream.
class OrtScratchAllocator final : public ScratchAllocator {
 public:
  OrtScratchAllocator(const OrtApi& api, OrtKernelContext* ctx) : api_(api), ctx_(ctx) {}
  ~OrtScratchAllocator() override;
  OrtScratchAllocator(const OrtScratchAllocator&) = delete;
  OrtScratchAllocator& operator=(const OrtScratchAllocator&) = delete;
  Status Open();
  // Through the C API's status-returning calls, never the allocator's own function pointers:
  // those throw ORT's C++ exception when memory runs out, and an exception from the runtime's
  // C++ library cannot unwind through this library's frames (it links its own, statically):
  // the process aborted instead of reporting the failure.
  void* Allocate(size_t bytes) override;
  void Free(void* data) override;

 private:
  const OrtApi& api_;
  OrtKernelContext* ctx_;
  OrtAllocator* allocator_ = nullptr;
};

// Runs kernel tasks on the session's intra-op thread pool (inline when it has one thread).
class OrtTaskRunner final : public TaskRunner {
 public:
  OrtTaskRunner(const OrtApi& api, OrtKernelContext* ctx) : api_(api), ctx_(ctx) {}
  Status Run(size_t num_tasks, TaskFn fn, void* data) const override;

 private:
  const OrtApi& api_;
  OrtKernelContext* ctx_;
};

// Shape inference: the input shapes ORT knows at session creation (symbolic dims have value -1
// and a name; an input of unknown rank shows as rank 0), and the output shapes the op declares.
struct InferredShape {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;  // UNDEFINED when not known
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;  // "" where the dim is known or anonymous
};

class ShapeInference {
 public:
  ShapeInference(const OrtApi& api, OrtShapeInferContext* ctx) : api_(api), ctx_(ctx) {}
  Status Input(size_t index, InferredShape* shape) const;
  Status SetOutput(size_t index, ONNXTensorElementDataType type, const InferredShape& shape) const;
  // A symbolic dim name no other dim has: for sizes known only at run time (e.g. a kept count),
  // shared by every output that has that size.
  static std::string NewSymbol(const char* stem);
  // Reads an int attribute; *found is false when the node lacks it.
  Status AttrInt(const char* name, int64_t* value, bool* found) const;

 private:
  const OrtApi& api_;
  OrtShapeInferContext* ctx_;
};

}  // namespace opbridge::ort
