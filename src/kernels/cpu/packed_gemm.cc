// PackedGemm: the variant for the CPU we run on, chosen once.
#include "kernels/cpu/packed_gemm.h"

namespace opbridge::cpu {
namespace detail {
extern const PackedGemm kPackedGemmX86_64_v2;
extern const PackedGemm kPackedGemmX86_64_v3;
extern const PackedGemm kPackedGemmX86_64_v4;
}  // namespace detail

namespace {

bool HasX86_64_v4() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
bool HasX86_64_v3() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

}  // namespace

int PackedGemmVariants(const PackedGemm** variants, int capacity) {
  __builtin_cpu_init();
  int count = 0;
  auto add = [&](const PackedGemm& g) {
    if (count < capacity) variants[count++] = &g;
  };
  if (HasX86_64_v4()) add(detail::kPackedGemmX86_64_v4);
  if (HasX86_64_v3()) add(detail::kPackedGemmX86_64_v3);
  add(detail::kPackedGemmX86_64_v2);
  return count;
}

const PackedGemm& PackedGemmForThisCpu() {
  static const PackedGemm* const best = [] {
    const PackedGemm* variants[3];
    PackedGemmVariants(variants, 3);
    return variants[0];
  }();
  return *best;
}

}  // namespace opbridge::cpu
