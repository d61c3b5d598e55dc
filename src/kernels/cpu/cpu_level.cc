// The list of dispatching functions that have run (cpu_level.h: DispatchRecord).
#include "kernels/cpu/cpu_level.h"

#include <mutex>

namespace opbridge::cpu {
namespace {

std::mutex g_records_mutex;
DispatchRecord* g_first_record = nullptr;  // records live as long as the process (function statics)
DispatchRecord** g_last_link = &g_first_record;

}  // namespace

DispatchRecord::DispatchRecord(const char* n) : name(n) {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  *g_last_link = this;
  g_last_link = &next;
}

std::vector<std::pair<std::string, int>> DispatchedLevels() {
  std::lock_guard<std::mutex> lock(g_records_mutex);
  std::vector<std::pair<std::string, int>> levels;
  for (const DispatchRecord* r = g_first_record; r != nullptr; r = r->next) {
    levels.emplace_back(r->name, r->level.load(std::memory_order_relaxed));
  }
  return levels;
}

}  // namespace opbridge::cpu
