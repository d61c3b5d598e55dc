// opbridge: the one way kernels run work in parallel.
//
// Kernels see only this interface, never a framework's thread pool. The ORT glue implements it
// with KernelContext_ParallelFor (ORT's intra-op pool); tests implement it serially and with
// std::thread to check that results do not depend on how tasks are spread over threads. Every
// kernel writes each output element from exactly one task and never reduces across tasks, which
// is what makes results identical whatever the thread count.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <new>

#include "core/status.h"

namespace opbridge {

class TaskRunner {
 public:
  using TaskFn = void (*)(void* data, size_t task_index);
  virtual ~TaskRunner() = default;
  // Calls fn(data, i) once for every i in [0, num_tasks), in any order, possibly concurrently.
  virtual Status Run(size_t num_tasks, TaskFn fn, void* data) const = 0;
};

// Runs every task on the calling thread, in order.
class SerialTaskRunner final : public TaskRunner {
 public:
  Status Run(size_t num_tasks, TaskFn fn, void* data) const override {
    for (size_t i = 0; i < num_tasks; ++i) fn(data, i);
    return Status::Ok();
  }
};

// Runs body(i) for i in [0, num_tasks) through `runner`. An exception escaping a task (only
// std::bad_alloc is possible in our kernels) is caught inside the task, since it must not cross
// a thread pool's C boundary, and reported as an error Status after all tasks end.
template <class Body>
Status ParallelFor(const TaskRunner& runner, size_t num_tasks, Body&& body) {
  if (num_tasks == 0) return Status::Ok();
  struct Closure {
    Body* body;
    std::atomic<bool> failed{false};
  } closure{&body};
  auto trampoline = [](void* data, size_t i) {
    auto* c = static_cast<Closure*>(data);
    try {
      (*c->body)(i);
    } catch (...) {
      c->failed.store(true);
    }
  };
  OPBRIDGE_RETURN_IF_ERROR(runner.Run(num_tasks, trampoline, &closure));
  if (closure.failed.load()) return Status::Error("out of memory while running the kernel");
  return Status::Ok();
}

// Number of tasks of at most `grain` items each that cover `items` items.
inline size_t NumChunks(size_t items, size_t grain) { return (items + grain - 1) / grain; }

}  // namespace opbridge
