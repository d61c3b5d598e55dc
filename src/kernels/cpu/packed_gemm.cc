// PackedGemm: the variant for the CPU we run on, chosen once.
#include "kernels/cpu/packed_gemm.h"

#include "kernels/cpu/cpu_level.h"

namespace opbridge::cpu {
namespace detail {
#if defined(__x86_64__)
extern const PackedGemm kPackedGemmX86_64_v2;
extern const PackedGemm kPackedGemmX86_64_v3;
extern const PackedGemm kPackedGemmX86_64_v4;
#else
extern const PackedGemm kPackedGemmAarch64;
#endif
}  // namespace detail

int PackedGemmVariants(const PackedGemm** variants, int capacity) {
  int count = 0;
  auto add = [&](const PackedGemm& g) {
    if (count < capacity) variants[count++] = &g;
  };
#if defined(__x86_64__)
  const int level = X86_64Level();
  if (level >= 4) add(detail::kPackedGemmX86_64_v4);
  if (level >= 3) add(detail::kPackedGemmX86_64_v3);
  add(detail::kPackedGemmX86_64_v2);
#else
  add(detail::kPackedGemmAarch64);
#endif
  return count;
}

const PackedGemm& PackedGemmForThisCpu() {
  static const PackedGemm* const best = [] {
    const PackedGemm* variants[3];
    PackedGemmVariants(variants, 3);
    return variants[0];
  }();
  static DispatchRecord record("PackedGemm");
  NoteLevel(record, LevelUpTo<4>());
  return *best;
}

}  // namespace opbridge::cpu
