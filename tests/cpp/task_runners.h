// Task runners for kernel tests: a multi-threaded one that deals tasks out in an order unlike
// the serial one, to check that results do not depend on scheduling.
#pragma once

#include <thread>
#include <vector>

#include "core/parallel.h"

namespace opbridge::testing {

class ThreadedTaskRunner final : public TaskRunner {
 public:
  explicit ThreadedTaskRunner(int threads) : threads_(threads) {}
  Status Run(size_t num_tasks, TaskFn fn, void* data) const override {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads_; ++t) {
      pool.emplace_back([=] {
        // Thread t runs tasks t, t + threads, ... from the end backwards.
        for (size_t i = num_tasks; i-- > 0;) {
          if (static_cast<int>(i % threads_) == t) fn(data, i);
        }
      });
    }
    for (auto& th : pool) th.join();
    return Status::Ok();
  }

 private:
  int threads_;
};

}  // namespace opbridge::testing
