# Cross-compiling for aarch64 Linux on an x86-64 Debian machine with Debian's cross GCC
# (g++-aarch64-linux-gnu: the same GCC 12 as the x86-64 build, with its aarch64 glibc under
# /usr/aarch64-linux-gnu). ./run.sh builds build-aarch64/ with it (the C++ tests, run under
# qemu-aarch64) and the aarch64 wheel (linked for glibc 2.28: OPBRIDGE_GLIBC_2_28).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Test programs (and gtest's test discovery) run in QEMU with the aarch64 glibc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
