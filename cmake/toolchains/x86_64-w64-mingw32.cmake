# Cross-compiling for Windows x86-64 on a Debian machine with Debian's mingw-w64 (GCC 12, the same
# compiler as the Linux builds). The -posix compilers: their C++ runtime has std::thread and
# std::mutex (winpthreads), which the win32 thread model's lacks in GCC 12. ./run.sh builds
# build-windows/ with it (opbridge_ort.dll, the win_amd64 wheel's, and the C++ tests, which run
# under Wine: the emulator below).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
