// opbridge ORT glue: turns an op's glue class into an ORT custom op (OrtCustomOp).
//
// A glue class Glue provides, for every execution provider (the op's definition):
//   using Attrs = <Glue>Attrs;   generated from the manifest (ort/generated/<op>_attrs.h): the
//                                schema, the attributes and their reader, the CUDA host inputs
//   static Status Create(const Attrs&, std::unique_ptr<Glue>*);   the checks between attributes
//     (or Create(const Attrs&, const OrtApi&, const OrtKernelInfo*, ...) to see the node's inputs)
//   static Status InferShape(const ShapeInference&);
// and one Compute per provider it has a kernel for:
//   Status Compute(const OrtApi&, OrtKernelContext*) const;       the CPU kernel
//   Status ComputeCuda(const OrtApi&, OrtKernelContext*) const;   the CUDA kernel (OPBRIDGE_CUDA
//                                                                  builds; in ort/ops/<op>_cuda.cc)
// CustomOp<Glue, provider> fills ORT's C struct with callbacks that call those, catch every
// exception, and turn every error into an OrtStatus whose message starts with the op's identity.
// The CPU op and its CUDA twin are two OrtCustomOps of one domain and op type: ORT picks the one
// of the execution provider the node is assigned to. Both come from the same Attrs and Create,
// so their inputs, attributes and validation messages are the same.
//
// The struct is filled from scratch (zero-initialised, then only the fields of the 1.21 layout)
// rather than through ORT's C++ CustomOpBase, to control `version` and to use the
// status-returning V2 callbacks only.
#pragma once

#include <onnxruntime_c_api.h>

#include <climits>
#include <memory>
#include <string>
#include <type_traits>

#include "ort/ort_util.h"
#include "ort/registration.h"

namespace opbridge::ort {

// The OrtApi the library was registered with (set by RegisterCustomOps); shape inference
// callbacks receive no API pointer of their own.
const OrtApi* RegisteredApi();
void SetRegisteredApi(const OrtApi* api);
// The minor version of the ONNX Runtime the library was registered with (1.x), for working
// around older runtimes' defects; the newest known until registration.
int RegisteredRuntimeMinor();
void SetRegisteredRuntimeMinor(int minor);

// Builds an OrtStatus from ours, prefixed with the op identity ("mmcv::MMCVRoiAlign: ...").
OrtStatus* ToOrtStatus(const OrtApi& api, const std::string& identity, const Status& status);

enum class Provider { kCpu, kCuda };

template <class Glue, Provider kProvider = Provider::kCpu>
class CustomOp : public OrtCustomOp {
 public:
  CustomOp(const char* domain, const char* name)
      : OrtCustomOp{}, domain_(domain), name_(name), identity_(std::string(domain) + "::" + name) {
    // The OrtCustomOp layout and callbacks of ORT 1.21; newer runtimes accept it as it is.
    version = ORT_API_VERSION;
    CreateKernel = nullptr;
    KernelCompute = nullptr;
    GetName = &NameOf;
    GetExecutionProviderType = &ExecutionProvider;
    GetInputTypeCount = [](const OrtCustomOp*) { return Schema().inputs.size(); };
    // Every input is declared as "any type": the op checks dtypes itself (CheckInputTypes, at
    // session creation, and at run time where a type was not known then), so that a wrong dtype gets an error naming the op, the
    // input and the dtype it takes, where ORT's own check names none of them.
    GetInputType = [](const OrtCustomOp*, size_t) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED; };
    GetOutputTypeCount = [](const OrtCustomOp*) { return Schema().outputs.size(); };
    GetOutputType = [](const OrtCustomOp*, size_t i) { return Schema().outputs[i].type; };
    GetInputCharacteristic = [](const OrtCustomOp*, size_t i) {
      const TensorSpec& spec = Schema().inputs[i];
      return spec.variadic ? INPUT_OUTPUT_VARIADIC : spec.optional ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
    };
    // ORT (1.21 at least) refuses to register an op with a required output of "any type" unless
    // exactly one input is of any type, which every input here is: such an output of an op with
    // more inputs (GatherTopk's) is declared optional instead. Its type comes from the op's shape
    // inference or from ORT's rule (the last input of any type), and Compute still writes it.
    GetOutputCharacteristic = [](const OrtCustomOp*, size_t i) {
      const OpSchema& schema = Schema();
      const TensorSpec& spec = schema.outputs[i];
      const bool any_type_of_several_inputs =
          spec.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED && schema.inputs.size() > 1;
      return spec.optional || any_type_of_several_inputs ? INPUT_OUTPUT_OPTIONAL : INPUT_OUTPUT_REQUIRED;
    };
    // A CUDA twin takes most inputs in device memory, and on the host those its launch needs
    // there (sizes, counts): ORT copies those for it.
    GetInputMemoryType = [](const OrtCustomOp*, size_t i) { return InputMemoryType(i); };
    GetVariadicInputMinArity = [](const OrtCustomOp*) { return 1; };
    // Heterogeneous: ORT would otherwise check that variadic inputs share one type itself, with
    // an error that names neither the identity nor the dtype the op takes (CheckInputTypes does).
    GetVariadicInputHomogeneity = [](const OrtCustomOp*) { return 0; };
    GetVariadicOutputMinArity = [](const OrtCustomOp*) { return 1; };
    GetVariadicOutputHomogeneity = [](const OrtCustomOp*) { return 1; };
    CreateKernelV2 = &CreateKernelImpl;
    KernelComputeV2 = &ComputeImpl;
    KernelDestroy = &DestroyImpl;
    InferOutputShapeFn = &InferShapeImpl;
    GetStartVersion = [](const OrtCustomOp*) { return 1; };
    GetEndVersion = [](const OrtCustomOp*) { return INT_MAX; };
  }

  const std::string& domain() const { return domain_; }
  const std::string& name() const { return name_; }
  const std::string& identity() const { return identity_; }

 private:
  // What ORT holds as the kernel: the glue object plus what its callbacks need.
  struct Kernel {
    const OrtApi* api;
    const CustomOp* op;
    std::unique_ptr<Glue> glue;
    // False when kernel creation checked every input's dtype (ORT then feeds only those types);
    // true when some input's type was not known then (or the input was absent).
    bool check_types_at_run_time;
  };

  static const OpSchema& Schema() { return Glue::Attrs::Schema(); }
  static const CustomOp* Self(const OrtCustomOp* op) { return static_cast<const CustomOp*>(op); }
  static const char* NameOf(const OrtCustomOp* op) { return Self(op)->name_.c_str(); }
  static const char* ExecutionProvider(const OrtCustomOp*) {
    return kProvider == Provider::kCuda ? "CUDAExecutionProvider" : "CPUExecutionProvider";
  }
  static OrtMemType InputMemoryType(size_t index) {
    if constexpr (kProvider == Provider::kCuda) {
      return Glue::Attrs::CudaInputOnHost(index) ? OrtMemTypeCPUInput : OrtMemTypeDefault;
    } else {
      return OrtMemTypeDefault;
    }
  }
  static Status RunCompute(const Glue& glue, const OrtApi& api, OrtKernelContext* ctx) {
    if constexpr (kProvider == Provider::kCuda) {
      return glue.ComputeCuda(api, ctx);
    } else {
      return glue.Compute(api, ctx);
    }
  }

  // The node's attributes read and checked by the generated reader, then the glue's own Create.
  static Status Create(const OrtApi& api, const OrtKernelInfo* info, std::unique_ptr<Glue>* glue) {
    typename Glue::Attrs attrs;
    OPBRIDGE_RETURN_IF_ERROR(Glue::Attrs::Read(AttrReader(api, info, Schema().attrs), &attrs));
    if constexpr (std::is_invocable_v<decltype(&Glue::Create), const typename Glue::Attrs&,
                                      std::unique_ptr<Glue>*>) {
      return Glue::Create(attrs, glue);
    } else {
      return Glue::Create(attrs, api, info, glue);
    }
  }

  static OrtStatusPtr CreateKernelImpl(const OrtCustomOp* op, const OrtApi* api,
                                       const OrtKernelInfo* info, void** kernel) noexcept {
    try {
      auto k = std::make_unique<Kernel>(Kernel{api, Self(op), nullptr, true});
      bool all_checked = false;
      Status status = CheckInputTypes(*api, info, Schema(), &all_checked);
      k->check_types_at_run_time = !all_checked;
      if (status.ok()) status = Create(*api, info, &k->glue);
      if (!status.ok()) return ToOrtStatus(*api, Self(op)->identity_, status);
      *kernel = k.release();
      return nullptr;
    } catch (const std::exception& e) {
      return ToOrtStatus(*api, Self(op)->identity_, Status::Error("internal error: ", e.what()));
    } catch (...) {
      return ToOrtStatus(*api, Self(op)->identity_, Status::Error("internal error"));
    }
  }

  static OrtStatusPtr ComputeImpl(void* kernel, OrtKernelContext* ctx) noexcept {
    auto* k = static_cast<Kernel*>(kernel);
    try {
      Status status = k->check_types_at_run_time ? CheckInputTypes(*k->api, ctx, Schema()) : Status::Ok();
      if (status.ok()) status = RunCompute(*k->glue, *k->api, ctx);
      return status.ok() ? nullptr : ToOrtStatus(*k->api, k->op->identity_, status);
    } catch (const std::bad_alloc&) {
      return ToOrtStatus(*k->api, k->op->identity_, Status::Error("out of memory"));
    } catch (const std::exception& e) {
      return ToOrtStatus(*k->api, k->op->identity_, Status::Error("internal error: ", e.what()));
    } catch (...) {
      return ToOrtStatus(*k->api, k->op->identity_, Status::Error("internal error"));
    }
  }

  static void DestroyImpl(void* kernel) noexcept { delete static_cast<Kernel*>(kernel); }

  static OrtStatusPtr InferShapeImpl(const OrtCustomOp* op, OrtShapeInferContext* ctx) noexcept {
    const OrtApi* api = RegisteredApi();
    if (api == nullptr) return nullptr;
    try {
      Status status = Glue::InferShape(ShapeInference(*api, ctx));
      return status.ok() ? nullptr : ToOrtStatus(*api, Self(op)->identity_, status);
    } catch (...) {
      return ToOrtStatus(*api, Self(op)->identity_, Status::Error("internal error in shape inference"));
    }
  }

  std::string domain_, name_, identity_;
};

// A registration row: the identity's op for ORT's CPU execution provider, or its CUDA twin (the same
// domain, op type and schema). Intentionally never freed: ORT may call the op's callbacks until the
// process ends.
template <class Glue>
RegisteredOp CpuOp(const char* domain, const char* name, const char* kernel) {
  return {domain, name, kernel, "CPU", new CustomOp<Glue>(domain, name), &Glue::Attrs::Schema()};
}

#ifdef OPBRIDGE_WITH_CUDA
template <class Glue>
RegisteredOp CudaOp(const char* domain, const char* name, const char* kernel) {
  return {domain, name, kernel, "CUDA", new CustomOp<Glue, Provider::kCuda>(domain, name), &Glue::Attrs::Schema()};
}
#endif

}  // namespace opbridge::ort
