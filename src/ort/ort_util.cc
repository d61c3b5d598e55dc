#include "ort/ort_util.h"

#include <atomic>

#include <cstring>
#include <sstream>
#include <type_traits>

#include "core/work_limits.h"
#include "ort/op_adapter.h"

namespace opbridge::ort {

namespace {
std::atomic<const OrtApi*> g_registered_api{nullptr};
std::atomic<int> g_registered_runtime_minor{1000};
}  // namespace

int RegisteredRuntimeMinor() { return g_registered_runtime_minor.load(); }
void SetRegisteredRuntimeMinor(int minor) { g_registered_runtime_minor.store(minor); }

const OrtApi* RegisteredApi() { return g_registered_api.load(); }
void SetRegisteredApi(const OrtApi* api) { g_registered_api.store(api); }

OrtStatus* ToOrtStatus(const OrtApi& api, const std::string& identity, const Status& status) {
  const std::string message = identity + ": " + status.message();
  return api.CreateStatus(ORT_INVALID_ARGUMENT, message.c_str());
}

Status FromOrtStatus(const OrtApi& api, OrtStatus* status) {
  if (status == nullptr) return Status::Ok();
  Status result = Status::Error(api.GetErrorMessage(status));
  api.ReleaseStatus(status);
  return result;
}

namespace {

const char* KindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "an int";
    case AttrKind::kFloat: return "a float";
    case AttrKind::kString: return "a string";
    case AttrKind::kInts: return "a list of ints";
    case AttrKind::kFloats: return "a list of floats";
  }
  return "?";
}

// What DescribeOtherKind says of an attribute that reads as a list of no elements of either kind.
constexpr const char* kEmptyList = "an empty list or a list of another kind";

// True when the node carries an attribute `name` readable as this kind (the status is released).
bool Succeeds(const OrtApi& api, OrtStatus* status) {
  if (status == nullptr) return true;
  api.ReleaseStatus(status);
  return false;
}

}  // namespace

Status AttrReader::Find(const char* name, AttrKind kind, const AttrSpec** spec) const {
  for (const AttrSpec& s : specs_) {
    if (std::strcmp(s.name, name) == 0 && s.kind == kind) {
      *spec = &s;
      return Status::Ok();
    }
  }
  return Status::Error("internal error: attribute '", name, "' (", KindName(kind),
                       ") is not in the op's schema");
}

// ORT's list getters do not check the attribute's kind: asked for ints, a list of floats (or a
// single int) reads as a list of 0 ints, and the other way round. So a list's kind is the one
// that reads with elements, and single values are tried first.
size_t AttrReader::ListSize(const char* name, AttrKind kind) const {
  size_t size = 0;
  OrtStatus* status = kind == AttrKind::kInts
                          ? api_.KernelInfoGetAttributeArray_int64(info_, name, nullptr, &size)
                          : api_.KernelInfoGetAttributeArray_float(info_, name, nullptr, &size);
  return Succeeds(api_, status) ? size : 0;
}

std::string AttrReader::DescribeOtherKind(const char* name) const {
  std::ostringstream os;
  int64_t i = 0;
  float f = 0.f;
  size_t size = 0;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_int64(info_, name, &i))) {
    os << "an int (" << i << ")";
  } else if (Succeeds(api_, api_.KernelInfoGetAttribute_float(info_, name, &f))) {
    os << "a float (" << f << ")";
  } else if (Succeeds(api_, api_.KernelInfoGetAttribute_string(info_, name, nullptr, &size))) {
    os << "a string";
  } else if (const size_t ints = ListSize(name, AttrKind::kInts); ints > 0) {
    os << "a list of " << ints << " ints";
  } else if (const size_t floats = ListSize(name, AttrKind::kFloats); floats > 0) {
    os << "a list of " << floats << " floats";
  } else if (Succeeds(api_, api_.KernelInfoGetAttributeArray_int64(info_, name, nullptr, &size))) {
    os << kEmptyList;
  }
  return os.str();  // empty: the node has no such attribute
}

Status AttrReader::Int(const char* name, int64_t* value) const {
  const AttrSpec* spec = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Find(name, AttrKind::kInt, &spec));
  int64_t v = 0;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_int64(info_, name, &v))) {
    *value = v;
    return Status::Ok();
  }
  const std::string other = DescribeOtherKind(name);
  if (!other.empty()) return Status::Error("attribute '", name, "' must be an int, got ", other);
  if (spec->required) return Status::Error("required int attribute '", name, "' is missing");
  *value = spec->int_default;
  return Status::Ok();
}

Status AttrReader::Float(const char* name, float* value) const {
  const AttrSpec* spec = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Find(name, AttrKind::kFloat, &spec));
  float v = 0.f;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_float(info_, name, &v))) {
    *value = v;
    return Status::Ok();
  }
  // Hand-written graphs often carry integral floats as ints (spatial_scale=1); accept them.
  int64_t i = 0;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_int64(info_, name, &i))) {
    *value = static_cast<float>(i);
    return Status::Ok();
  }
  const std::string other = DescribeOtherKind(name);
  if (!other.empty()) return Status::Error("attribute '", name, "' must be a float, got ", other);
  if (spec->required) return Status::Error("required float attribute '", name, "' is missing");
  *value = spec->float_default;
  return Status::Ok();
}

Status AttrReader::String(const char* name, std::string* value) const {
  const AttrSpec* spec = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Find(name, AttrKind::kString, &spec));
  size_t size = 0;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_string(info_, name, nullptr, &size))) {
    std::string buffer(size, '\0');  // size counts the terminating NUL
    OPBRIDGE_RETURN_IF_ERROR(
        FromOrtStatus(api_, api_.KernelInfoGetAttribute_string(info_, name, buffer.data(), &size)));
    buffer.resize(size > 0 ? size - 1 : 0);
    *value = buffer;
    return Status::Ok();
  }
  const std::string other = DescribeOtherKind(name);
  if (!other.empty()) return Status::Error("attribute '", name, "' must be a string, got ", other);
  if (spec->required) return Status::Error("required string attribute '", name, "' is missing");
  *value = spec->string_default;
  return Status::Ok();
}

Status AttrReader::Ints(const char* name, std::vector<int64_t>* value) const {
  const AttrSpec* spec = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Find(name, AttrKind::kInts, &spec));
  // A single int is a list of one (mmcv's functional API writes stride=1 as an int).
  int64_t single = 0;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_int64(info_, name, &single))) {
    *value = {single};
    return Status::Ok();
  }
  return List(name, AttrKind::kInts, spec, value);
}

Status AttrReader::Floats(const char* name, std::vector<float>* value) const {
  const AttrSpec* spec = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(Find(name, AttrKind::kFloats, &spec));
  float single = 0.0f;
  if (Succeeds(api_, api_.KernelInfoGetAttribute_float(info_, name, &single))) {
    *value = {single};
    return Status::Ok();
  }
  return List(name, AttrKind::kFloats, spec, value);
}

template <class T>
Status AttrReader::List(const char* name, AttrKind kind, const AttrSpec* spec, std::vector<T>* value) const {
  size_t size = 0;
  OrtStatus* status = kind == AttrKind::kInts
                          ? api_.KernelInfoGetAttributeArray_int64(info_, name, nullptr, &size)
                          : api_.KernelInfoGetAttributeArray_float(info_, name, nullptr, &size);
  // ORT's list getters do not check the kind: a list of the other kind, a string or a single float
  // (or int) read as this kind with no elements. A read of no elements is an empty list only when
  // the node holds none of those (a single value of this list's element kind was taken before List).
  const bool read = Succeeds(api_, status);
  const std::string other = read && size > 0 ? std::string() : DescribeOtherKind(name);
  if (read && (size > 0 || other == kEmptyList)) {
    value->assign(size, T{});
    if (size == 0) return Status::Ok();
    if constexpr (std::is_same_v<T, int64_t>) {
      return FromOrtStatus(api_, api_.KernelInfoGetAttributeArray_int64(info_, name, value->data(), &size));
    } else {
      return FromOrtStatus(api_, api_.KernelInfoGetAttributeArray_float(info_, name, value->data(), &size));
    }
  }
  if (!other.empty()) return Status::Error("attribute '", name, "' must be ", KindName(kind), ", got ", other);
  if (spec->required) return Status::Error("required attribute '", name, "' (", KindName(kind), ") is missing");
  if constexpr (std::is_same_v<T, int64_t>) {
    *value = spec->ints_default;
  } else {
    *value = spec->floats_default;
  }
  return Status::Ok();
}

Status InputCount(const OrtApi& api, OrtKernelContext* ctx, size_t* count) {
  return FromOrtStatus(api, api.KernelContext_GetInputCount(ctx, count));
}

Status GetInput(const OrtApi& api, OrtKernelContext* ctx, size_t index, InputTensor* tensor) {
  const OrtValue* value = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetInput(ctx, index, &value)));
  *tensor = InputTensor();
  if (value == nullptr) return Status::Ok();  // an absent optional input
  tensor->present = true;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.GetTensorTypeAndShape(value, &info)));
  size_t rank = 0;
  Status status = FromOrtStatus(api, api.GetDimensionsCount(info, &rank));
  if (status.ok()) {
    tensor->shape.resize(rank);
    status = FromOrtStatus(api, api.GetDimensions(info, tensor->shape.data(), rank));
  }
  if (status.ok()) status = FromOrtStatus(api, api.GetTensorElementType(info, &tensor->type));
  api.ReleaseTensorTypeAndShapeInfo(info);
  OPBRIDGE_RETURN_IF_ERROR(status);
  void* data = nullptr;
  // The 1.21 C API has no const accessor; the data is only read.
  OPBRIDGE_RETURN_IF_ERROR(
      FromOrtStatus(api, api.GetTensorMutableData(const_cast<OrtValue*>(value), &data)));
  tensor->data = data;
  return Status::Ok();
}

const char* DtypeName(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "float32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return "uint8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return "int8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return "uint16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return "int16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return "int32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "int64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING: return "string";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return "bool";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return "float16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return "float64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return "uint32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return "uint64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return "bfloat16";
    default: return "a non-numeric or unusual type";
  }
}

const TensorSpec& InputSpec(const OpSchema& schema, size_t index) {
  return index < schema.inputs.size() ? schema.inputs[index] : schema.inputs.back();
}

namespace {

// The dtypes input `spec` takes, for messages: "float32", or "float32, float64, int32 or int64".
std::string TakenDtypes(const OpSchema& schema, const TensorSpec& spec) {
  if (spec.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    if (spec.also == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return DtypeName(spec.type);
    return std::string(DtypeName(spec.type)) + " or " + DtypeName(spec.also);
  }
  std::string names;
  for (size_t i = 0; i < schema.t_types.size(); ++i) {
    if (i > 0) names += i + 1 == schema.t_types.size() ? " or " : ", ";
    names += DtypeName(schema.t_types[i]);
  }
  return names;
}

bool TakesDtype(const OpSchema& schema, const TensorSpec& spec, ONNXTensorElementDataType type) {
  if (spec.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    return type == spec.type || (spec.also != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED && type == spec.also);
  }
  for (ONNXTensorElementDataType t : schema.t_types) {
    if (type == t) return true;
  }
  return false;
}

// The inputs of a float type parameter T take one dtype together (RoIAlign's features and RoIs are
// both float16, or both float32: one storage type for the kernel): the first such input's dtype,
// which each later one must have. Index types mix (MultiScaleDeformableAttention's int32 and int64
// shapes and offsets: the kernel reads each in its own).
class TypeParameter {
 public:
  explicit TypeParameter(const OpSchema& schema) : schema_(schema) {}
  Status Check(size_t index, ONNXTensorElementDataType type) {
    const TensorSpec& spec = InputSpec(schema_, index);
    if (spec.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED || !IsFloat(type)) return Status::Ok();
    if (first_ == nullptr) {
      first_ = &spec;
      first_index_ = index;
      type_ = type;
      return Status::Ok();
    }
    if (type == type_) return Status::Ok();
    return Status::Error("input '", spec.name, "'", Which(spec, index), " has dtype ", DtypeName(type), " and input '",
                         first_->name, "'", Which(*first_, first_index_), " ", DtypeName(type_),
                         ": the op takes one dtype for both (one of ", TakenDtypes(schema_, spec), ")");
  }

 private:
  static bool IsFloat(ONNXTensorElementDataType type) {
    return type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ||
           type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
  }
  static std::string Which(const TensorSpec& spec, size_t index) {
    return spec.variadic ? " (input " + std::to_string(index) + ")" : std::string();
  }
  const OpSchema& schema_;
  const TensorSpec* first_ = nullptr;
  size_t first_index_ = 0;
  ONNXTensorElementDataType type_ = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

}  // namespace

Status CheckInputType(const OpSchema& schema, size_t index, ONNXTensorElementDataType type) {
  const TensorSpec& spec = InputSpec(schema, index);
  if (TakesDtype(schema, spec, type)) return Status::Ok();
  if (spec.variadic) {
    return Status::Error("input '", spec.name, "' (input ", index, ") has dtype ", DtypeName(type),
                         "; the op takes ", TakenDtypes(schema, spec));
  }
  return Status::Error("input '", spec.name, "' has dtype ", DtypeName(type), "; the op takes ",
                       TakenDtypes(schema, spec));
}

Status CheckInputTypes(const OrtApi& api, OrtKernelContext* ctx, const OpSchema& schema) {
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(InputCount(api, ctx, &count));
  TypeParameter t(schema);
  for (size_t i = 0; i < count; ++i) {
    const OrtValue* value = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelContext_GetInput(ctx, i, &value)));
    if (value == nullptr) continue;  // an absent optional input
    OrtTensorTypeAndShapeInfo* info = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.GetTensorTypeAndShape(value, &info)));
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    Status status = FromOrtStatus(api, api.GetTensorElementType(info, &type));
    api.ReleaseTensorTypeAndShapeInfo(info);
    OPBRIDGE_RETURN_IF_ERROR(status);
    OPBRIDGE_RETURN_IF_ERROR(CheckInputType(schema, i, type));
    OPBRIDGE_RETURN_IF_ERROR(t.Check(i, type));
  }
  return Status::Ok();
}

Status CheckInputTypes(const OrtApi& api, const OrtKernelInfo* info, const OpSchema& schema, bool* all_checked) {
  *all_checked = false;
  size_t count = 0;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.KernelInfo_GetInputCount(info, &count)));
  bool complete = true;
  TypeParameter t(schema);
  for (size_t i = 0; i < count; ++i) {
    OrtTypeInfo* type_info = nullptr;
    // An absent optional input has no type: nothing to check (then or at run time).
    if (!Succeeds(api, api.KernelInfo_GetInputTypeInfo(info, i, &type_info)) || type_info == nullptr) {
      complete = false;
      continue;
    }
    const OrtTensorTypeAndShapeInfo* tensor_info = nullptr;  // owned by type_info
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    const bool known = Succeeds(api, api.CastTypeInfoToTensorInfo(type_info, &tensor_info)) &&
                       tensor_info != nullptr && Succeeds(api, api.GetTensorElementType(tensor_info, &type));
    api.ReleaseTypeInfo(type_info);
    if (!known) {
      return Status::Error("input '", InputSpec(schema, i).name, "' must be a tensor of ",
                           TakenDtypes(schema, InputSpec(schema, i)));
    }
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
      complete = false;
      continue;
    }
    OPBRIDGE_RETURN_IF_ERROR(CheckInputType(schema, i, type));
    OPBRIDGE_RETURN_IF_ERROR(t.Check(i, type));
  }
  *all_checked = complete;
  return Status::Ok();
}

Status InputRankAtCreation(const OrtApi& api, const OrtKernelInfo* info, size_t index, int64_t* rank) {
  *rank = -1;
  OrtTypeInfo* type_info = nullptr;
  if (!Succeeds(api, api.KernelInfo_GetInputTypeInfo(info, index, &type_info)) || type_info == nullptr) {
    return Status::Ok();
  }
  const OrtTensorTypeAndShapeInfo* tensor_info = nullptr;  // owned by type_info
  size_t count = 0;
  if (Succeeds(api, api.CastTypeInfoToTensorInfo(type_info, &tensor_info)) && tensor_info != nullptr &&
      Succeeds(api, api.GetDimensionsCount(tensor_info, &count)) && count > 0) {
    *rank = static_cast<int64_t>(count);
  }
  api.ReleaseTypeInfo(type_info);
  return Status::Ok();
}

Status AllocateBoundedOutput(const OrtApi& api, OrtKernelContext* ctx, size_t index, const Shape& shape,
                             void** data, ONNXTensorElementDataType type) {
  OPBRIDGE_RETURN_IF_ERROR(CheckCallOutputElements(shape));
  return AllocateOutput(api, ctx, index, shape, data, type);
}

Status AllocateOutput(const OrtApi& api, OrtKernelContext* ctx, size_t index, const Shape& shape,
                      void** data, ONNXTensorElementDataType type) {
  // The ops compute output shapes from attributes and input shapes, which can be anything: a
  // shape whose byte size does not fit in memory's address range is an error here rather than
  // an overflow in ORT's size arithmetic. (8 bytes: the widest element type the ops write.)
  int64_t count = 0;
  if (!CheckedNumElements(shape, &count) || count > (int64_t{1} << 60)) {
    return Status::Error("output ", index, " would have shape ", ShapeToString(shape),
                         ", more elements than memory can hold");
  }
  OrtValue* value = nullptr;
  Status status = FromOrtStatus(api, api.KernelContext_GetOutput(ctx, index, shape.data(), shape.size(), &value));
  if (!status.ok()) {  // usually out of memory; ORT's message alone names its allocator's source file
    return Status::Error("could not allocate output ", index, " of shape ", ShapeToString(shape), ": ",
                         status.message());
  }
  if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    // An output of the type parameter T has its inputs' dtype, as shape inference tells ORT; a
    // graph that types it otherwise would have the kernel write elements of another size.
    OrtTensorTypeAndShapeInfo* info = nullptr;
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.GetTensorTypeAndShape(value, &info)));
    ONNXTensorElementDataType allocated = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    status = FromOrtStatus(api, api.GetTensorElementType(info, &allocated));
    api.ReleaseTensorTypeAndShapeInfo(info);
    OPBRIDGE_RETURN_IF_ERROR(status);
    if (allocated != type) {
      return Status::Error("output ", index, " has dtype ", DtypeName(allocated), " in the graph; the op writes ",
                           DtypeName(type), ", its inputs' dtype");
    }
  }
  return FromOrtStatus(api, api.GetTensorMutableData(value, data));
}

OrtScratchAllocator::~OrtScratchAllocator() {
  if (allocator_ != nullptr) api_.ReleaseAllocator(allocator_);
}

void* OrtScratchAllocator::Allocate(size_t bytes) {
  void* data = nullptr;
  if (OrtStatus* status = api_.AllocatorAlloc(allocator_, bytes, &data)) {
    api_.ReleaseStatus(status);
    return nullptr;  // the caller reports "could not allocate"
  }
  return data;
}

void OrtScratchAllocator::Free(void* data) {
  if (OrtStatus* status = api_.AllocatorFree(allocator_, data)) api_.ReleaseStatus(status);
}

Status OrtScratchAllocator::Open() {
  if (allocator_ != nullptr) return Status::Ok();
  OrtMemoryInfo* info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api_, api_.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info)));
  Status status = FromOrtStatus(api_, api_.KernelContext_GetAllocator(ctx_, info, &allocator_));
  api_.ReleaseMemoryInfo(info);
  return status;
}

Status OrtTaskRunner::Run(size_t num_tasks, TaskFn fn, void* data) const {
  if (num_tasks == 0) return Status::Ok();
  if (num_tasks == 1) {  // skip the pool's dispatch for single-task work
    fn(data, 0);
    return Status::Ok();
  }
  return FromOrtStatus(api_, api_.KernelContext_ParallelFor(ctx_, fn, num_tasks, 0, data));
}

Status ShapeInference::Input(size_t index, InferredShape* shape) const {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(
      FromOrtStatus(api_, api_.ShapeInferContext_GetInputTypeShape(ctx_, index, &info)));
  size_t rank = 0;
  Status status = FromOrtStatus(api_, api_.GetTensorElementType(info, &shape->type));
  if (status.ok()) status = FromOrtStatus(api_, api_.GetDimensionsCount(info, &rank));
  std::vector<const char*> symbols(rank, nullptr);
  if (status.ok()) {
    shape->dims.assign(rank, -1);
    status = FromOrtStatus(api_, api_.GetDimensions(info, shape->dims.data(), rank));
  }
  if (status.ok() && rank > 0) {
    status = FromOrtStatus(api_, api_.GetSymbolicDimensions(info, symbols.data(), rank));
  }
  // `info` belongs to the context, which releases it: releasing it here frees it twice.
  OPBRIDGE_RETURN_IF_ERROR(status);
  shape->symbols.clear();
  for (const char* s : symbols) shape->symbols.emplace_back(s ? s : "");
  return Status::Ok();
}

std::string ShapeInference::NewSymbol(const char* stem) {
  static std::atomic<uint64_t> counter{0};
  return std::string("opbridge_") + stem + "_" + std::to_string(counter.fetch_add(1));
}

Status ShapeInference::SetOutput(size_t index, ONNXTensorElementDataType type,
                                 const InferredShape& shape) const {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api_, api_.CreateTensorTypeAndShapeInfo(&info)));
  // ORT writes a dim without a symbol as its integer value, so an unknown dim (-1) needs a name.
  // Each gets a fresh one: equal names would tell ORT the dims are equal.
  std::vector<std::string> names(shape.dims.size());
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i < shape.symbols.size() && !shape.symbols[i].empty()) {
      names[i] = shape.symbols[i];
    } else if (shape.dims[i] < 0) {
      names[i] = NewSymbol("unk");
    }
  }
  std::vector<const char*> symbols;
  for (const std::string& s : names) symbols.push_back(s.c_str());
  Status status = FromOrtStatus(api_, api_.SetTensorElementType(info, type));
  if (status.ok()) {
    status = FromOrtStatus(api_, api_.SetDimensions(info, shape.dims.data(), shape.dims.size()));
  }
  if (status.ok() && !symbols.empty()) {
    status = FromOrtStatus(api_, api_.SetSymbolicDimensions(info, symbols.data(), symbols.size()));
  }
  if (status.ok()) {
    status = FromOrtStatus(api_, api_.ShapeInferContext_SetOutputTypeShape(ctx_, index, info));
  }
  api_.ReleaseTensorTypeAndShapeInfo(info);
  return status;
}

Status ShapeInference::AttrInt(const char* name, int64_t* value, bool* found) const {
  const OrtOpAttr* attr = nullptr;
  *found = false;
  if (!Succeeds(api_, api_.ShapeInferContext_GetAttribute(ctx_, name, &attr)) || attr == nullptr) {
    return Status::Ok();
  }
  size_t out = 0;
  if (!Succeeds(api_, api_.ReadOpAttr(attr, ORT_OP_ATTR_INT, value, sizeof(*value), &out))) {
    return Status::Ok();  // wrong kind: the kernel reports it when the session is created
  }
  *found = true;
  return Status::Ok();
}

}  // namespace opbridge::ort
