// opbridge: scratch memory for kernels, from whatever allocator the backend provides.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace opbridge {

// Thread-safe: kernels allocate from inside parallel tasks.
class ScratchAllocator {
 public:
  virtual ~ScratchAllocator() = default;
  virtual void* Allocate(size_t bytes) = 0;  // nullptr when out of memory
  virtual void Free(void* data) = 0;
};

// malloc/free; for tests and benchmarks.
class HeapScratchAllocator final : public ScratchAllocator {
 public:
  void* Allocate(size_t bytes) override { return std::malloc(bytes); }
  void Free(void* data) override { std::free(data); }
};

// A block of scratch memory owned for a scope.
class ScratchBlock {
 public:
  ScratchBlock(ScratchAllocator& allocator, size_t bytes)
      : allocator_(allocator), data_(allocator.Allocate(bytes)) {}
  ~ScratchBlock() {
    if (data_ != nullptr) allocator_.Free(data_);
  }
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;
  void* data() const { return data_; }

 private:
  ScratchAllocator& allocator_;
  void* data_;
};

}  // namespace opbridge
