// Two glibc symbols that GCC 12's static C++ runtime needs and glibc 2.28 lacks, defined inside the
// library for the release wheels only (OPBRIDGE_GLIBC_2_28 in CMakeLists.txt), which link against
// glibc 2.28's symbols so that they run on every manylinux_2_28 system (RHEL 8, Ubuntu 20.04,
// Debian 10 and newer). Both are hidden: the version script exports neither, so the process's own
// glibc keeps its definitions for everyone else.
//
// Compiled against the build machine's newer glibc headers, whose struct dl_find_object is the one
// the unwinder was compiled with.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>

extern "C" {

// libstdc++ (glibc >= 2.32) reads it to skip atomic reference counts in single-threaded processes:
// 0 means "maybe several threads", so the atomic path is always taken, which is always correct.
char __libc_single_threaded = 0;

#if defined(DLFO_STRUCT_HAS_EH_DBASE)  // glibc >= 2.35's headers, which GCC's runtime was built with
// libgcc's unwinder (built for glibc >= 2.35) asks _dl_find_object for the loaded object holding
// pc and its PT_GNU_EH_FRAME, to throw an exception through it; before 2.35 the unwinder searched
// the loaded objects with dl_iterate_phdr, which is what this does. Exceptions are errors here,
// thrown and caught inside the library, so the search's cost does not matter.
int _dl_find_object(void* pc, dl_find_object* result) {
  struct Search {
    uintptr_t pc;
    dl_find_object* result;
    bool found;
  } search{reinterpret_cast<uintptr_t>(pc), result, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        uintptr_t start = UINTPTR_MAX, end = 0, eh_frame = 0;
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD) {
            start = begin < start ? begin : start;
            end = begin + segment.p_memsz > end ? begin + segment.p_memsz : end;
            contains = contains || (s->pc >= begin && s->pc < begin + segment.p_memsz);
          } else if (segment.p_type == PT_GNU_EH_FRAME) {
            eh_frame = begin;
          }
        }
        if (!contains) return 0;
        *s->result = dl_find_object{};
        s->result->dlfo_map_start = reinterpret_cast<void*>(start);
        s->result->dlfo_map_end = reinterpret_cast<void*>(end);
        s->result->dlfo_eh_frame = reinterpret_cast<void*>(eh_frame);
        s->found = true;
        return 1;
      },
      &search);
  return search.found ? 0 : -1;
}
#endif

}  // extern "C"
