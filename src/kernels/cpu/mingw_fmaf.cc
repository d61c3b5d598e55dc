// The Windows build's fmaf (CMakeLists.txt links it into every program and the DLL): correctly
// rounded, where mingw-w64's own rounds the product before adding (correctly_rounded_fmaf.h). A
// definition in the program's objects wins over the static C runtime's, whose fmaf member is then
// never linked; std::fma of floats and the kernels' fmaf calls at the baseline level come here
// (x86-64-v3 and v4 code computes fmaf with the FMA instruction).
#include "kernels/cpu/correctly_rounded_fmaf.h"

extern "C" float fmaf(float a, float b, float c) { return opbridge::cpu::CorrectlyRoundedFmaf(a, b, c); }
