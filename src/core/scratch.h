// opbridge: scratch memory for kernels, from whatever allocator the backend provides.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // A request for 0 bytes gets a byte, so that an empty problem is not mistaken for a failed
  // allocation (ORT's allocator returns null for 0 bytes).
  ScratchBlock(ScratchAllocator& allocator, size_t bytes)
      : allocator_(allocator), data_(allocator.Allocate(bytes > 0 ? bytes : 1)) {}
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

// One scratch block that a task reuses for a sequence of problems: Reserve() reallocates only
// when a problem needs more than the block holds (the contents are not kept).
class ReusedScratchBlock {
 public:
  explicit ReusedScratchBlock(ScratchAllocator& allocator) : allocator_(allocator) {}
  ~ReusedScratchBlock() {
    if (data_ != nullptr) allocator_.Free(data_);
  }
  ReusedScratchBlock(const ReusedScratchBlock&) = delete;
  ReusedScratchBlock& operator=(const ReusedScratchBlock&) = delete;
  // At least `bytes` bytes, or null when out of memory.
  void* Reserve(size_t bytes) {
    if (data_ != nullptr && bytes <= size_) return data_;
    if (data_ != nullptr) allocator_.Free(data_);
    size_ = bytes > 0 ? bytes : 1;
    data_ = allocator_.Allocate(size_);
    if (data_ == nullptr) size_ = 0;
    return data_;
  }
  size_t size() const { return size_; }

 private:
  ScratchAllocator& allocator_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Carves typed arrays out of one scratch block, each starting on a 64-byte boundary (relative
// to the block). Size the block as the sum of ArenaBytes<T>(count) of the arrays taken.
template <class T>
size_t ArenaBytes(int64_t count) {
  return (static_cast<size_t>(count) * sizeof(T) + 63) & ~size_t{63};
}

class Arena {
 public:
  Arena(void* data, size_t bytes) : data_(static_cast<char*>(data)), bytes_(bytes) {}
  // An array of `count` T; nullptr when the block is too small (a sizing mistake of the caller).
  template <class T>
  T* Take(int64_t count) {
    const size_t size = ArenaBytes<T>(count);
    if (size > bytes_ - used_) return nullptr;
    T* result = reinterpret_cast<T*>(data_ + used_);
    used_ += size;
    return result;
  }

 private:
  char* data_;
  size_t bytes_;
  size_t used_ = 0;
};

}  // namespace opbridge
