// What the CPU we run on offers the kernels' vector code, and how a function is built once per
// level and chosen at run time.
//
// x86-64: code is built for x86-64-v2 (SSE4.2, the oldest level the library supports) and, where
// its speed depends on wider vectors, again for v3 (AVX2, FMA) and v4 (AVX-512), chosen at run
// time by X86_64Level(): by hand (PackedGemm's per-level files, the attention softmax, the grid
// sampler's gathers, the benchmarks' Eigen GEMM) or through RunAtCpuLevel below.
// aarch64: one build. NEON and fused multiply-adds are in every aarch64 CPU, so there is nothing to
// choose; the kernels whose speed depends on intrinsics have NEON paths (PackedGemm, FilterAbove),
// the rest are plain loops the compiler vectorizes.
//
// Why not GCC's target_clones: its resolver is an ifunc, which only ELF has; a Windows DLL (PE)
// cannot have one. RunAtCpuLevel is one mechanism for Linux and Windows alike: the function's body
// is always inlined into one copy per level, each compiled with that level's target attribute (what
// target_clones compiles too), and a branch on the level, read once per process, calls the best one.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "opbridge's CPU kernels are built for x86-64 and aarch64"
#endif

// A function body that RunAtCpuLevel inlines into each level's copy.
#define OPBRIDGE_ALWAYS_INLINE inline __attribute__((always_inline))

namespace opbridge::cpu {

#if defined(__x86_64__)

// 4 with AVX-512 (F, BW, VL, DQ), 3 with AVX2 and FMA, else 2.
inline int X86_64Level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return 4;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 3;
  return 2;
}

// Whether the kernels built for this CPU fuse multiply-adds (x86-64-v3 and v4), which decides the
// bits of the products and of the attention's exp (see packed_gemm.h, exp_polynomial.h).
inline bool CpuKernelsFuseMultiplyAdds() { return X86_64Level() >= 3; }

#else  // aarch64

inline bool CpuKernelsFuseMultiplyAdds() { return true; }

#endif

// X86_64Level() of this process, asked once (0 on aarch64: one build).
inline int CpuLevel() {
#if defined(__x86_64__)
  static const int level = X86_64Level();
  return level;
#else
  return 0;
#endif
}

// ---- Which level each dispatching function ran at -------------------------------------------------
// Every function chosen per level notes the level it ran at, once per process and level (a relaxed
// load on later calls: no shared cache line is written in the hot loops), so that a test can show
// which code a CPU, or Windows, ran (DispatchedLevels; tests/cpp/cpu_level_test.cc).
struct DispatchRecord {
  const char* name;
  std::atomic<int> level{-1};
  DispatchRecord* next = nullptr;
  explicit DispatchRecord(const char* n);  // adds itself to the list DispatchedLevels reads
};

inline void NoteLevel(DispatchRecord& record, int level) {
  if (record.level.load(std::memory_order_relaxed) != level) record.level.store(level, std::memory_order_relaxed);
}

// (name, level) of every dispatching function that has run in this process, in the order they first ran.
std::vector<std::pair<std::string, int>> DispatchedLevels();

// The level a function built up to kTop (3 or 4) runs at on this CPU.
template <int kTop>
int LevelUpTo() {
  const int level = CpuLevel();
  return level < kTop ? level : kTop;
}

// ---- RunAtCpuLevel ---------------------------------------------------------------------------------
// Body is a struct with `static constexpr const char* kName` (the kernel and function, for the
// record) and `OPBRIDGE_ALWAYS_INLINE static R Run(...)`; RunAtCpuLevel<kTop, Body>(args...) calls
// Run's copy for x86-64-v4 (kTop 4), v3 or v2, the best this CPU runs. A body must give the same bits
// at every level (no -ffast-math, no contraction: CMakeLists.txt), which the emulated-CPU test runs
// check.
// One copy of Body::Run per level, each with Run's own signature (the arguments are passed as the
// function itself would take them).
template <class Body, class Signature = decltype(&Body::Run)>
struct LevelBuilds;

template <class Body, class R, class... P>
struct LevelBuilds<Body, R (*)(P...)> {
#if defined(__x86_64__)
  __attribute__((target("arch=x86-64-v4"))) static R V4(P... args) { return Body::Run(args...); }
  __attribute__((target("arch=x86-64-v3"))) static R V3(P... args) { return Body::Run(args...); }
#endif
  static R Baseline(P... args) { return Body::Run(args...); }
  static DispatchRecord& Record() {
    static DispatchRecord record(Body::kName);
    return record;
  }
};

template <int kTop, class Body, class... A>
OPBRIDGE_ALWAYS_INLINE decltype(auto) RunAtCpuLevel(A&&... args) {
  static_assert(kTop == 3 || kTop == 4, "a function is built up to x86-64-v3 or v4");
  const int level = LevelUpTo<kTop>();
  NoteLevel(LevelBuilds<Body>::Record(), level);
#if defined(__x86_64__)
  if constexpr (kTop == 4) {
    if (level == 4) return LevelBuilds<Body>::V4(std::forward<A>(args)...);
  }
  if (level == 3) return LevelBuilds<Body>::V3(std::forward<A>(args)...);
#endif
  return LevelBuilds<Body>::Baseline(std::forward<A>(args)...);
}

}  // namespace opbridge::cpu
