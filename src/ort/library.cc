// The library's one exported symbol: RegisterCustomOps, which ORT calls when a session's
// options load libopbridge_ort.so.
//
// It checks the runtime is new enough, takes the OrtApi from the OrtApiBase ORT passes (the
// library never links libonnxruntime), and adds the "opbridge", "mmcv" and "mmdeploy" domains
// to the session options. The domain objects are created once, on the first call, and then
// shared by every session options object of the process: ORT only reads them, and keeping them
// for the life of the process means no session can outlive its domain. The library is linked
// with -z nodelete (CMakeLists.txt), so ORT's dlclose after the last session never unloads it:
// there is one load, one table and one set of domains per process. On Windows the DLL pins itself
// (PinThisLibrary) to the same effect.
#include <onnxruntime_c_api.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "opbridge/opbridge_ort.h"
#include "ort/op_adapter.h"
#include "ort/registration.h"
#ifdef OPBRIDGE_WITH_CUDA
#include "kernels/cuda/cuda_status.h"
#endif
#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#endif

namespace opbridge::ort {
namespace {

constexpr int kMinimumOrtMinor = 21;  // the headers we build against; see DEVELOPERS.md

std::mutex g_mutex;

// Keeps this library loaded for the life of the process once it has registered its ops, as
// -z nodelete does on Linux (CMakeLists.txt): ORT unloads a custom-op library when the last
// session that loaded it ends, and a Windows process that loaded and unloaded the DLL about 1,050
// times aborted (its one-time state rebuilt on every load). Pinned, the DLL's FreeLibrary calls
// are no-ops.
void PinThisLibrary() {
#ifdef _WIN32
  HMODULE module = nullptr;
  GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                     reinterpret_cast<LPCWSTR>(&PinThisLibrary), &module);
#endif
}
std::vector<OrtCustomOpDomain*>* g_domains = nullptr;  // never freed, see above

// Parses the minor version of "1.30.0"; returns -1 when it cannot.
int RuntimeMinor(const char* version) {
  int major = 0, minor = 0;
  if (version == nullptr || std::sscanf(version, "%d.%d", &major, &minor) != 2) return -1;
  return major > 1 ? 1000 : minor;
}

// Whether an optional input comes before another input (it can then be absent in the middle
// of the node's inputs, as an empty name).
bool HasOptionalInputInTheMiddle(const OpSchema& schema) {
  for (size_t i = 0; i + 1 < schema.inputs.size(); ++i) {
    if (schema.inputs[i].optional) return true;
  }
  return false;
}

// Why this process registers no CUDA twins, or "" when it does; decided once. The twins link a
// static CUDA runtime that needs a driver for its major version: on a machine whose driver is older
// (or that has none) every node placed on the CUDA execution provider would fail to launch, where
// without the twins it runs on the CPU as in a CPU-only build. Only the driver's version is asked
// (cuDriverGetVersion, no cuInit): initializing CUDA here, in every process that registers the
// library, CPU sessions included, would leave a process that forks unable to use CUDA in its children.
// Whether a device exists is left to ORT, which creates no CUDA session without one.
const std::string& CudaTwinsBlocker() {
#ifdef OPBRIDGE_WITH_CUDA
  static const std::string blocker = cuda::CudaTwinsBlocker(cuda::DriverCudaVersion(), cuda::RuntimeCudaVersion());
#elif defined(_WIN32)
  static const std::string blocker = "opbridge's Windows library has no CUDA kernels (they are built for Linux only)";
#else
  static const std::string blocker = "the library was built without CUDA kernels";
#endif
  return blocker;
}

Status BuildDomains(const OrtApi& api, int runtime_minor, std::vector<OrtCustomOpDomain*>* domains) {
  std::vector<std::string> names;
  for (const RegisteredOp& entry : RegisteredOps()) {
    if (std::strcmp(entry.provider, "CUDA") == 0 && !CudaTwinsBlocker().empty()) continue;
    // ORT 1.21 to 1.23 dereference a null type while preparing a custom op's shape inference
    // for a node whose absent optional input is followed by another (DeformConv2d without mask,
    // with bias): a segfault at session creation (fixed in 1.24). Such ops get no shape
    // inference there; ORT then leaves their output shapes to run time.
    if (runtime_minor < 24 && HasOptionalInputInTheMiddle(*entry.schema)) {
      const_cast<OrtCustomOp*>(entry.op)->InferOutputShapeFn = nullptr;
    }
    size_t index = 0;
    while (index < names.size() && names[index] != entry.domain) ++index;
    if (index == names.size()) {
      OrtCustomOpDomain* domain = nullptr;
      OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(api, api.CreateCustomOpDomain(entry.domain, &domain)));
      names.emplace_back(entry.domain);
      domains->push_back(domain);
    }
    OPBRIDGE_RETURN_IF_ERROR(FromOrtStatus(
        api, api.CustomOpDomain_Add((*domains)[index], const_cast<OrtCustomOp*>(entry.op))));
  }
  return Status::Ok();
}

OrtStatus* Register(OrtSessionOptions* options, const OrtApiBase* api_base) {
  // GetApi(1) exists in every ORT release, so errors can be reported even on old runtimes.
  const OrtApi* api_v1 = api_base->GetApi(1);
  const char* version = api_base->GetVersionString();
  const int minor = RuntimeMinor(version);
  if (minor < kMinimumOrtMinor) {
    const std::string message = std::string("opbridge: needs ONNX Runtime >= 1.") +
                                std::to_string(kMinimumOrtMinor) + ", this process runs " +
                                (version ? version : "an unknown version");
    return api_v1 ? api_v1->CreateStatus(ORT_FAIL, message.c_str()) : nullptr;
  }
  const OrtApi* api = api_base->GetApi(ORT_API_VERSION);
  if (api == nullptr) {
    return api_v1 ? api_v1->CreateStatus(ORT_FAIL, "opbridge: ONNX Runtime refused API version 21")
                  : nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_domains == nullptr) {
    PinThisLibrary();
    auto* domains = new std::vector<OrtCustomOpDomain*>();
    SetRegisteredRuntimeMinor(minor);
    Status status = BuildDomains(*api, minor, domains);
    if (!status.ok()) {
      for (OrtCustomOpDomain* d : *domains) api->ReleaseCustomOpDomain(d);
      delete domains;
      return api->CreateStatus(ORT_FAIL, ("opbridge: " + status.message()).c_str());
    }
    g_domains = domains;
    SetRegisteredApi(api);
  }
  for (OrtCustomOpDomain* domain : *g_domains) {
    if (OrtStatus* status = api->AddCustomOpDomain(options, domain)) return status;
  }
  return nullptr;
}

}  // namespace

}  // namespace opbridge::ort

#ifdef OPBRIDGE_WITH_CUDA
#define OPBRIDGE_CUDA_INFO "true, \"cuda_architectures\": \"" OPBRIDGE_CUDA_ARCHITECTURES "\""
#else
#define OPBRIDGE_CUDA_INFO "false"
#endif

extern "C" OPBRIDGE_EXPORT const char* OpbridgeLibraryInfo(void) {
  // "cuda_twins": whether this process registers the CUDA kernels for ORT's CUDA execution provider,
  // and if not, "cuda_twins_blocker" says why (library.cc: CudaTwinsBlocker).
  static const std::string info = [] {
    const std::string& blocker = opbridge::ort::CudaTwinsBlocker();
    return std::string("{\"version\": \"" OPBRIDGE_VERSION "\", \"cuda\": " OPBRIDGE_CUDA_INFO ", \"cuda_twins\": ") +
           (blocker.empty() ? "true" : "false, \"cuda_twins_blocker\": \"" + blocker + "\"") + "}";
  }();
  return info.c_str();
}

extern "C" OPBRIDGE_EXPORT OrtStatus* ORT_API_CALL RegisterCustomOps(OrtSessionOptions* options,
                                                                const OrtApiBase* api_base) {
  if (api_base == nullptr) return nullptr;  // nothing to report an error through
  try {
    return opbridge::ort::Register(options, api_base);
  } catch (...) {
    const OrtApi* api = api_base->GetApi(1);
    return api ? api->CreateStatus(ORT_FAIL, "opbridge: internal error while registering ops")
               : nullptr;
  }
}
