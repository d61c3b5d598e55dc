#include "kernels/cuda/cuda_status.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <vector>

#include "kernels/cuda/launch.cuh"

namespace opbridge::cuda {

Status CudaError(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Status::Ok();
  return Status::Error("CUDA error in ", what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

Status OutOfScratch(size_t bytes) {
  return Status::Error("could not allocate ", bytes, " bytes of CUDA scratch memory");
}

void ClearStaleError() { (void)cudaGetLastError(); }

bool SyncAfterLaunches() {
  static const bool sync = [] {
    const char* value = getenv("OPBRIDGE_CUDA_SYNC");
    return value != nullptr && strcmp(value, "1") == 0;
  }();
  return sync;
}

Status LaunchStatus(const char* kernel, Stream stream) {
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaGetLastError(), kernel));
  if (!SyncAfterLaunches()) return Status::Ok();
  // OPBRIDGE_CUDA_SYNC=1: a fault inside the kernel is reported here, naming it, instead of by a
  // later call of whatever runs next on the device.
  return CudaError(cudaStreamSynchronize(stream), kernel);
}

namespace {

// A page-locked slot for the counts copied to the host, so that the copy is a DMA the stream orders,
// not a staged copy; kept for reuse by later calls (a free list: concurrent calls take their own).
class PinnedSlot {
 public:
  PinnedSlot() {
    std::lock_guard<std::mutex> lock(Mutex());
    if (!Free().empty()) {
      slot_ = Free().back();
      Free().pop_back();
    } else if (cudaMallocHost(&slot_, sizeof(int64_t) * kMaxCountsToHost) != cudaSuccess) {
      slot_ = nullptr;
      (void)cudaGetLastError();
    }
  }
  ~PinnedSlot() {
    if (slot_ == nullptr) return;
    std::lock_guard<std::mutex> lock(Mutex());
    Free().push_back(slot_);
  }
  PinnedSlot(const PinnedSlot&) = delete;
  PinnedSlot& operator=(const PinnedSlot&) = delete;
  int64_t* get() { return slot_ != nullptr ? static_cast<int64_t*>(slot_) : pageable_; }

 private:
  static std::mutex& Mutex() {
    static std::mutex* mutex = new std::mutex;  // never destroyed: callers may run during exit
    return *mutex;
  }
  static std::vector<void*>& Free() {
    static std::vector<void*>* free = new std::vector<void*>;
    return *free;
  }
  void* slot_ = nullptr;
  int64_t pageable_[kMaxCountsToHost] = {};
};

}  // namespace

Status CopyCountsToHost(const int64_t* device_counts, int64_t* counts, int number, const char* what, Stream stream) {
  if (number < 1 || number > kMaxCountsToHost) {
    return Status::Error(what, ": ", number, " counts asked for, at most ", kMaxCountsToHost, " at once");
  }
  PinnedSlot slot;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaMemcpyAsync(slot.get(), device_counts, sizeof(int64_t) * number,
                                                     cudaMemcpyDeviceToHost, stream),
                                     what));
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaStreamSynchronize(stream), what));
  for (int i = 0; i < number; ++i) counts[i] = slot.get()[i];
  return Status::Ok();
}

Status CopyCountToHost(const int64_t* device_count, int64_t* count, const char* what, Stream stream) {
  return CopyCountsToHost(device_count, count, 1, what, stream);
}

Status CurrentDeviceFigures(DeviceFigures* figures) {
  constexpr int kCached = 64;
  static std::mutex mutex;
  static DeviceFigures cache[kCached];
  static bool known[kCached] = {};
  int device = 0;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaGetDevice(&device), "cudaGetDevice"));
  if (device >= 0 && device < kCached) {
    std::lock_guard<std::mutex> lock(mutex);
    if (known[device]) {
      *figures = cache[device];
      return Status::Ok();
    }
  }
  DeviceFigures found;
  found.device = device;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaDeviceGetAttribute(&found.sms, cudaDevAttrMultiProcessorCount, device),
                                     "the device's SM count"));
  OPBRIDGE_RETURN_IF_ERROR(CudaError(
      cudaDeviceGetAttribute(&found.shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
      "the device's shared memory limit"));
  if (device >= 0 && device < kCached) {
    std::lock_guard<std::mutex> lock(mutex);
    cache[device] = found;
    known[device] = true;
  }
  *figures = found;
  return Status::Ok();
}

Status SetDevice(int device) {
  int current = -1;
  OPBRIDGE_RETURN_IF_ERROR(CudaError(cudaGetDevice(&current), "cudaGetDevice"));
  if (current == device) return Status::Ok();
  return CudaError(cudaSetDevice(device), "cudaSetDevice");
}

int RuntimeCudaVersion() { return CUDART_VERSION; }

int DriverCudaVersion() {
  // The driver library stays loaded (the runtime loads it again when a kernel first runs).
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return 0;
  using GetVersion = int (*)(int*);  // CUresult cuDriverGetVersion(int*): callable before cuInit
  const auto get_version = reinterpret_cast<GetVersion>(dlsym(driver, "cuDriverGetVersion"));
  int version = 0;
  if (get_version == nullptr || get_version(&version) != 0) return 0;
  return version;
}

namespace {
std::string CudaVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}
}  // namespace

std::string CudaTwinsBlocker(int driver_version, int runtime_version) {
  if (driver_version <= 0) return "no NVIDIA driver on this machine (libcuda.so.1 not found)";
  if (driver_version / 1000 < runtime_version / 1000) {
    return "the NVIDIA driver supports CUDA " + CudaVersionText(driver_version) + ", older than the CUDA " +
           CudaVersionText(runtime_version) + " the kernels were built with: update the driver to one for CUDA " +
           std::to_string(runtime_version / 1000) + ".x";
  }
  return "";
}

}  // namespace opbridge::cuda
